package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// sandboxFlags are add's sandbox flags (docs/sandbox.md).
type sandboxFlags struct {
	on    bool
	read  []string
	write []string
	net   []string
	off   bool // edit only: remove the sandbox
}

func (s *sandboxFlags) register(fs *pflag.FlagSet, edit bool) {
	if edit {
		fs.BoolVar(&s.off, "no-sandbox", false, "run the stdio server without any sandbox (\"sandbox\": false), a team replica's default one included")
	}
	fs.BoolVar(&s.on, "sandbox", false, "confine a stdio server: no network, writes only to its private folder (the flags below widen it)")
	fs.StringArrayVar(&s.read, "allow-read", nil, "let the sandboxed server read `DIR`; repeatable")
	fs.StringArrayVar(&s.write, "allow-write", nil, "let the sandboxed server read and write `DIR`; repeatable")
	fs.StringArrayVar(&s.net, "allow-net", nil, "let the sandboxed server connect to `HOST:PORT` (the port is enforced, not the host); repeatable, or all, or none")
}

// given reports whether any sandbox flag is set.
func (s *sandboxFlags) given() bool {
	return s.on || s.off || len(s.read)+len(s.write)+len(s.net) > 0
}

// apply adds the sandbox to the request's settings.
func (s *sandboxFlags) apply(req *apitype.PutServerRequest) error {
	if !s.given() {
		return nil
	}
	var cfg map[string]any
	if err := json.Unmarshal(req.Config, &cfg); err != nil {
		return err
	}
	if err := s.applyTo(cfg); err != nil {
		return err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encoding the server's settings: %w", err)
	}
	req.Config = raw
	return nil
}

// applyTo sets cfg's sandbox: --no-sandbox opts a stdio server out of
// any ("sandbox": false — removing the key would leave a team replica's
// server in the sandbox replicas give by default); otherwise the
// stored one (or the strict preset) gets the listed folders added and, if
// --allow-net is given, that network. The --allow flags imply --sandbox.
// Relative folders are made absolute here, where the user typed them.
func (s *sandboxFlags) applyTo(cfg map[string]any) error {
	if s.off {
		if s.on || len(s.read)+len(s.write)+len(s.net) > 0 {
			return usagef("--no-sandbox cannot be combined with --sandbox or --allow-*")
		}
		if cfg[keyType] == typeStdio {
			cfg["sandbox"] = false
		} else {
			delete(cfg, "sandbox")
		}
		return nil
	}
	if cfg[keyType] != typeStdio {
		return usagef("--sandbox and --allow-* are for stdio servers: a URL server runs elsewhere")
	}
	sb, _ := cfg["sandbox"].(map[string]any)
	if sb == nil {
		sb = map[string]any{"network": "none"}
	}
	fs, _ := sb["filesystem"].(map[string]any)
	if fs == nil {
		fs = map[string]any{}
	}
	for key, dirs := range map[string][]string{"read": s.read, "write": s.write} {
		list, _ := fs[key].([]any)
		for _, d := range dirs {
			a, err := absDir(d)
			if err != nil {
				return usagef("--allow-%s %s: %v", key, d, err)
			}
			list = append(list, a)
		}
		if len(list) > 0 {
			fs[key] = list
		}
	}
	if len(fs) > 0 {
		sb["filesystem"] = fs
	}
	switch {
	case len(s.net) == 1 && (s.net[0] == "all" || s.net[0] == "none"):
		sb["network"] = s.net[0]
	case len(s.net) > 0:
		sb["network"] = s.net
	}
	cfg["sandbox"] = sb
	return nil
}

// absDir makes a typed folder absolute; "~/…" is kept for the daemon to
// expand with its home.
func absDir(d string) (string, error) {
	if d == "~" || strings.HasPrefix(d, "~/") {
		return d, nil
	}
	return filepath.Abs(d)
}

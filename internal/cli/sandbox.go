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
}

func (s *sandboxFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&s.on, "sandbox", false, "confine a stdio server: no network, writes only to its private folder (the flags below widen it)")
	fs.StringArrayVar(&s.read, "allow-read", nil, "let the sandboxed server read `DIR`; repeatable")
	fs.StringArrayVar(&s.write, "allow-write", nil, "let the sandboxed server read and write `DIR`; repeatable")
	fs.StringArrayVar(&s.net, "allow-net", nil, "let the sandboxed server connect to `HOST:PORT` (the port is enforced, not the host); repeatable, or all")
}

// apply adds the sandbox to the request's settings. The --allow flags
// imply --sandbox. Relative folders are made absolute here, where the user
// typed them.
func (s *sandboxFlags) apply(req *apitype.PutServerRequest) error {
	if !s.on && len(s.read)+len(s.write)+len(s.net) == 0 {
		return nil
	}
	var cfg map[string]any
	if err := json.Unmarshal(req.Config, &cfg); err != nil {
		return err
	}
	if cfg[keyType] != typeStdio {
		return usagef("--sandbox and --allow-* are for stdio servers: a URL server runs elsewhere")
	}
	fs := map[string]any{}
	for key, dirs := range map[string][]string{"read": s.read, "write": s.write} {
		if len(dirs) == 0 {
			continue
		}
		var abs []string
		for _, d := range dirs {
			a, err := absDir(d)
			if err != nil {
				return usagef("--allow-%s %s: %v", key, d, err)
			}
			abs = append(abs, a)
		}
		fs[key] = abs
	}
	sb := map[string]any{"network": "none"}
	if len(fs) > 0 {
		sb["filesystem"] = fs
	}
	switch {
	case len(s.net) == 1 && s.net[0] == "all":
		sb["network"] = "all"
	case len(s.net) > 0:
		sb["network"] = s.net
	}
	cfg["sandbox"] = sb
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encoding the server's settings: %w", err)
	}
	req.Config = raw
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

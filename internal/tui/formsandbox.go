package tui

import (
	"fmt"
	"maps"
	"strings"

	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// The form's sandbox rows (docs/sandbox.md): the strict preset (no
// network, writes only to the server's private folder) switched on or
// off, and the folders and network that widen it. The daemon checks them
// with the config's own validation when the form is saved.

const (
	sandboxOff    = "off"
	sandboxStrict = "on: strict, widened below"
)

// sandboxValues are the sandbox rows as typed.
type sandboxValues struct {
	on                bool
	read, write, nets string
}

func (f *form) newSandboxInputs() {
	f.choices[fSandbox] = []string{sandboxOff, sandboxStrict}
	f.inputs[fSandboxRead] = newInput(`folders, quoted as in a shell: ~/docs "/srv/my docs"`, false)
	f.inputs[fSandboxWrite] = newInput("folders it may also write; blank: only its private one", false)
	f.inputs[fSandboxNet] = newInput("none (the default), all, or host:port host:port", false)
}

// sandboxFields are the sandbox rows: the switch, and the rest once on.
func (f *form) sandboxFields() []field {
	if f.choice(fSandbox) == sandboxOff {
		return []field{fSandbox}
	}
	return []field{fSandbox, fSandboxRead, fSandboxWrite, fSandboxNet}
}

// fillSandbox shows a stored server's sandbox.
func (f *form) fillSandbox(cfg map[string]any) {
	sb, ok := cfg[serverconf.KeySandbox].(map[string]any)
	if !ok {
		return
	}
	f.choose(fSandbox, sandboxStrict)
	fs, _ := sb["filesystem"].(map[string]any)
	f.inputs[fSandboxRead].SetValue(cmdline.Join(stringsOf(fs["read"])))
	f.inputs[fSandboxWrite].SetValue(cmdline.Join(stringsOf(fs["write"])))
	switch n := sb["network"].(type) {
	case string:
		f.inputs[fSandboxNet].SetValue(n)
	case []any:
		f.inputs[fSandboxNet].SetValue(strings.Join(stringsOf(n), " "))
	}
}

func (f *form) sandboxValues() sandboxValues {
	return sandboxValues{on: f.choice(fSandbox) != sandboxOff, read: f.inputs[fSandboxRead].Value(),
		write: f.inputs[fSandboxWrite].Value(), nets: f.inputs[fSandboxNet].Value()}
}

// stringsOf is a JSON array's strings.
func stringsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// applySandbox writes the sandbox rows into cfg; settings the form does
// not show (limits) are kept.
func applySandbox(cfg map[string]any, v sandboxValues) error {
	if !v.on {
		delete(cfg, serverconf.KeySandbox)
		return nil
	}
	sb := map[string]any{}
	if old, ok := cfg[serverconf.KeySandbox].(map[string]any); ok {
		sb = maps.Clone(old)
	}
	fs := map[string]any{}
	for key, typed := range map[string]string{"read": v.read, "write": v.write} {
		if strings.TrimSpace(typed) == "" {
			continue
		}
		dirs, err := cmdline.Split(typed)
		if err != nil {
			return fmt.Errorf("may %s: %w", key, err)
		}
		if len(dirs) > 0 {
			fs[key] = dirs
		}
	}
	serverconf.SetOrDelete(sb, "filesystem", fs, len(fs) == 0)
	switch nets := strings.Fields(strings.ReplaceAll(v.nets, ",", " ")); {
	case len(nets) == 0:
		sb["network"] = "none"
	case len(nets) == 1 && (nets[0] == "none" || nets[0] == "all"):
		sb["network"] = nets[0]
	default:
		sb["network"] = nets
	}
	cfg[serverconf.KeySandbox] = sb
	return nil
}

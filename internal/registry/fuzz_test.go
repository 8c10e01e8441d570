package registry

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
)

// FuzzTranslate feeds the translator registry answers and values: it
// never panics, a translation without missing inputs is a configuration
// the daemon accepts, a secret never gets a value, and no command line
// carries a secret variable's placeholder.
func FuzzTranslate(f *testing.F) {
	for _, b := range registrytest.Documents() {
		f.Add(b, uint8(0), "value")
		f.Add(b, uint8(2), "/tmp/x")
	}
	f.Fuzz(func(t *testing.T, b []byte, option uint8, value string) {
		e, err := DecodeEntry(b)
		if err != nil {
			return
		}
		probe, err := Translate(e.Server, Request{Option: int(option % 8)})
		if err != nil {
			return
		}
		values := map[string][]string{}
		secrets := map[string]bool{}
		for _, fl := range probe.Fields {
			if fl.Secret {
				secrets[fl.Key] = true
			} else if fl.Omitted == "" {
				values[fl.Key] = []string{value}
			}
		}
		p, err := Translate(e.Server, Request{Option: int(option % 8), Values: values, Secrets: secrets, Home: "/home/u"})
		if err != nil {
			return
		}
		if len(p.Missing) == 0 {
			file := &config.File{MCP: config.MCP{Servers: map[string]config.Server{p.Server: p.Config}}}
			if err := config.Validate(file); err != nil {
				t.Fatalf("translated into invalid settings: %v\n%s", err, b)
			}
		}
		for _, fl := range p.Fields {
			if fl.Secret && len(fl.Value) > 0 {
				t.Fatalf("secret %s got a value", fl.Key)
			}
			if fl.Secret && fl.Var != "" && slices.ContainsFunc(p.Config.Args, func(a string) bool { return strings.Contains(a, "${"+fl.Var+"}") }) {
				t.Fatalf("secret %s on the command line: %q", fl.Key, p.Config.Args)
			}
		}
		if _, err := json.Marshal(p.Config); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodePage: a list answer never panics the decoder, and what it
// keeps is checked.
func FuzzDecodePage(f *testing.F) {
	for _, b := range registrytest.Documents() {
		f.Add([]byte(`{"servers":[` + string(b) + `],"metadata":{"nextCursor":"abc"}}`))
	}
	f.Add([]byte(`{"servers":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePage(b)
		if err != nil {
			return
		}
		for _, e := range p.Entries {
			if !ValidName(e.Server.Name) || !ValidVersion(e.Server.Version) {
				t.Fatalf("kept an entry named %q version %q", e.Server.Name, e.Server.Version)
			}
			if strings.ContainsFunc(e.Server.Description+e.Server.Title, func(r rune) bool { return r < ' ' }) {
				t.Fatalf("a control character kept: %q", e.Server.Description)
			}
		}
	})
}

package clientconf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzEdit: any file, in any client's format, is either refused or edited
// into one that holds Plexus's entry and decodes as before otherwise
// (Edit checks that itself); disconnecting that result works, and the
// JSON editor's output is valid JSON once comments are blanked. Nothing
// panics or hangs.
func FuzzEdit(f *testing.F) {
	names := Clients()
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name+".before"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	for _, s := range []string{"", "{}", "{,}", `{"mcpServers": {"plexus": 1}}`, "[mcp_servers]\nplexus = {command = \"x\"}\n",
		"extensions: {}\n", "extensions:\n  plexus: 1\n", `{"a": "\u00e9 // not a comment", /* c */ "b": [1,]}`, "{\"mcp\": {\"a\":1,}\n}"} {
		f.Add(uint8(0), []byte(s))
		f.Add(uint8(len(names)-1), []byte(s))
		f.Add(uint8(4), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, src []byte) {
		name := names[int(which)%len(names)]
		out, err := Edit(name, src, "plexus", true)
		if err != nil {
			return
		}
		if c := clients[name]; c.format == "json" || c.format == "jsonc" {
			if !json.Valid(standardJSON(out)) {
				t.Fatalf("%s: not JSON after the edit:\n%s", name, out)
			}
		}
		if _, err := Edit(name, out, "plexus", false); err != nil {
			t.Fatalf("%s: disconnecting what connect wrote: %v\n%s", name, err, out)
		}
	})
}

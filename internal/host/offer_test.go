package host

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/catalog"
)

// rawServerArg re-executes the test binary as a stdio MCP server that
// writes its answers as literal bytes: its tools/list is the file named by
// the next argument, its other lists those below. It does not implement
// resources/templates/list. If a second argument names a file that
// exists, it never answers anything (and says it started, in that
// name with ".started").
const rawServerArg = "-plexus-host-raw-server"

const (
	rawInitialize = `{"protocolVersion":"2025-06-18","serverInfo":{"name":"raw","version":"1","websiteUrl":"https://example.com"},` +
		`"instructions":"Use show.","capabilities":{"tools":{},"resources":{"subscribe":false},"prompts":{},` +
		`"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`
	rawResource = `{"uri":"ui://raw/view.html","name":"view","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}`
	rawPrompt   = `{"name":"greet","description":" Says hello. ","arguments":[{"name":"who","required":true}],"icons":[{"src":"https://example.com/p.png"}]}`
	// Two tools, not in name order: an MCP Apps tool with everything the
	// SDK's struct does not model, and a plain one written loosely.
	rawShow  = `{"name":"show","description":"Shows the view.\n\n  Indented. ","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},"annotations":{"readOnlyHint":true,"x-newHint":"kept"},"execution":{"taskSupport":"optional"},"_meta":{"ui":{"resourceUri":"ui://raw/view.html"},"ui/resourceUri":"ui://raw/view.html"}}`
	rawPlain = `{ "name" : "another", "inputSchema" : { "type" : "object" } }`
)

func runRawServer(args []string) {
	if len(args) > 1 {
		if _, err := os.Stat(args[1]); err == nil {
			os.WriteFile(args[1]+".started", nil, 0o600)
			select {} // told to hang: it never answers
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		var result string
		switch msg.Method {
		case "initialize":
			result = rawInitialize
		case "tools/list":
			tools, err := os.ReadFile(args[0])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			result = `{"tools":` + string(tools) + `}`
		case "resources/list":
			result = `{"resources":[` + rawResource + `]}`
		case "prompts/list":
			result = `{"prompts":[` + rawPrompt + `]}`
		case "ping":
			result = `{}`
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", msg.ID)
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", msg.ID, result)
	}
	os.Exit(0)
}

// TestOfferPassesDefinitionsOn: what the host offers of a server is each
// definition as the server wrote it — a tool's _meta (its MCP Apps
// view), execution, annotations of a newer spec, white space and key
// order; its resources and prompts; its capabilities with an extension's
// — in the server's order, with only the tools pinning lets through. A
// server that does not implement resources/templates/list is added all
// the same, saying so.
func TestOfferPassesDefinitionsOn(t *testing.T) {
	th := newTestHost(t)
	tools := filepath.Join(t.TempDir(), "tools.json")
	write := func(defs ...string) {
		if err := os.WriteFile(tools, []byte("["+strings.Join(defs, ",")+"]"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(rawShow, rawPlain)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	th.create("raw", mustJSON(t, map[string]any{"type": "stdio", "command": exe, "args": []string{rawServerArg, tools}}))

	o, err := th.Offer("raw")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range o.Tools {
		got = append(got, string(e.Raw))
	}
	if want := []string{rawShow, rawPlain}; !slices.Equal(got, want) {
		t.Errorf("tools offered as\n%s\nthe server wrote\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(o.Resources) != 1 || string(o.Resources[0].Raw) != rawResource || len(o.Prompts) != 1 || string(o.Prompts[0].Raw) != rawPrompt {
		t.Errorf("resources %v, prompts %v", o.Resources, o.Prompts)
	}
	if string(o.InitializeResult) != rawInitialize || !strings.Contains(string(o.Capabilities), `"io.modelcontextprotocol/ui"`) {
		t.Errorf("handshake kept as %s, capabilities %s", o.InitializeResult, o.Capabilities)
	}
	st := th.status("raw")
	if st.State != "ready" || !slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "resources/templates/list") }) {
		t.Errorf("status %s, warnings %q: want ready, saying templates were refused", st.State, st.Warnings)
	}
	// The view's renamed reference and the renamed resource agree.
	show := o.Tools[0]
	agg, err := show.Offered(show.Name, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.Resources[0].Offered(true)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		URI string `json:"uri"`
	}
	json.Unmarshal(res, &r)
	if views := catalog.UIResourceURIs(agg); len(views) != 1 || views[0] != r.URI {
		t.Errorf("aggregated: the tool names %q, the resource is %s", views, r.URI)
	}

	// The server moves the tool's view elsewhere: pinning sees the change
	// and holds the tool back (R-CAT-6).
	write(strings.Replace(rawShow, "ui://raw/view.html", "ui://raw/other.html", 2), rawPlain)
	if err := th.Restart(t.Context(), "raw"); err != nil {
		t.Fatal(err)
	}
	o, err = th.Offer("raw")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Tools) != 1 || o.Tools[0].Tool != "another" {
		t.Errorf("after the view moved, offered %d tools: want only \"another\", show held back", len(o.Tools))
	}
	st = th.status("raw")
	if len(st.Held) != 1 || st.Held[0].Tool != "show" {
		t.Errorf("held = %+v", st.Held)
	}
}

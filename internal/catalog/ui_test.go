package catalog

import (
	"encoding/json"
	"slices"
	"testing"
)

// appTool is an MCP Apps tool as a server writes it: its view named in
// _meta both ways.
const appTool = `{"name":"show", "inputSchema":{"type":"object"},` +
	`"_meta":{"ui":{"resourceUri":"ui://charts/bar.html","prefersBorder":true},"ui/resourceUri":"ui://charts/bar.html","other":"kept"}}`

func TestUIURIRoundTrip(t *testing.T) {
	for _, uri := range []string{"ui://charts/bar.html", "ui://x", "ui:///abs?q=1#f"} {
		renamed := UIURI("github", uri)
		server, own, ok := ParseUIURI(renamed)
		if !ok || server != "github" || own != uri {
			t.Errorf("UIURI(github, %s) = %s, parsed back as %q %q %v", uri, renamed, server, own, ok)
		}
	}
	if got := UIURI("s", "file:///x"); got != "file:///x" {
		t.Errorf("a file URI was renamed: %s", got)
	}
	for _, bad := range []string{"file:///x", "ui://", "ui://nosep", "ui:///x"} {
		if s, o, ok := ParseUIURI(bad); ok {
			t.Errorf("ParseUIURI(%s) = %q %q", bad, s, o)
		}
	}
}

func TestOfferedToolViews(t *testing.T) {
	b, warnings, err := Build("charts", Lists{
		Tools:     []json.RawMessage{json.RawMessage(appTool)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"ui://charts/bar.html","name":"bar","mimeType":"text/html;profile=mcp-app"}`)},
	}, Filter{}, Limits{})
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	var e Entry
	for _, x := range b.Entries {
		if x.Kind == KindTool {
			e = x
		}
	}
	if got := UIResourceURIs(e.Raw); !slices.Equal(got, []string{"ui://charts/bar.html"}) {
		t.Errorf("views = %q", got)
	}
	bare, err := e.Offered("show", false)
	if err != nil || string(bare) != appTool {
		t.Errorf("bare: %s, %v; want the server's bytes", bare, err)
	}
	agg, err := e.Offered(e.Name, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"` + e.Name + `", "inputSchema":{"type":"object"},` +
		`"_meta":{"ui":{"resourceUri":"ui://charts/charts/bar.html","prefersBorder":true},"ui/resourceUri":"ui://charts/charts/bar.html","other":"kept"}}`
	if string(agg) != want {
		t.Errorf("aggregated:\n%s\nwant\n%s", agg, want)
	}
	res, err := b.Resources[0].Offered(true)
	if err != nil || string(res) != `{"uri":"ui://charts/charts/bar.html","name":"bar","mimeType":"text/html;profile=mcp-app"}` {
		t.Errorf("aggregated resource: %s, %v", res, err)
	}
	if res, _ := b.Resources[0].Offered(false); string(res) != string(b.Resources[0].Raw) {
		t.Errorf("bare resource: %s", res)
	}

	read := json.RawMessage(`{"contents":[{"uri":"ui://charts/bar.html","mimeType":"text/html;profile=mcp-app","text":"<p>"},{"uri":"file:///x","text":""}]}`)
	got, err := WithContentURIs(read, func(uri string) string { return UIURI("charts", uri) })
	if want := `{"contents":[{"uri":"ui://charts/charts/bar.html","mimeType":"text/html;profile=mcp-app","text":"<p>"},{"uri":"file:///x","text":""}]}`; err != nil || string(got) != want {
		t.Errorf("read result: %s, %v; want %s", got, err, want)
	}
	plain := json.RawMessage(`{"contents":[{"uri":"file:///x","text":""}]}`)
	if got, _ := WithContentURIs(plain, nil); &got[0] != &plain[0] {
		t.Error("a read result with no view was copied")
	}
}

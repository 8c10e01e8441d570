package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// renderApp returns an app writing to buffers, for rendering alone.
func renderApp() (*app, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &app{env: Env{Stdout: &out, Stderr: &errOut}}, &out, &errOut
}

const mixedResult = `{"content":[
	{"type":"text","text":"first line\nsecond line"},
	{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="},
	{"type":"audio","mimeType":"audio/wav","data":"AAAA"},
	{"type":"resource","resource":{"uri":"file:///srv/a.txt","mimeType":"text/plain","text":"inline"}},
	{"type":"resource_link","uri":"file:///srv/b.txt","name":"b"},
	{"type":"text","text":"evil \u001b[2Jclear"},
	{"type":"hologram"}
],"structuredContent":{"n":1},"_meta":{"x":1}}`

func TestRenderCallHuman(t *testing.T) {
	a, out, errOut := renderApp()
	if err := a.renderCall(json.RawMessage(mixedResult), false); err != nil {
		t.Fatal(err)
	}
	want := "first line\nsecond line\n" +
		"[image image/png, 8 bytes]\n" +
		"[audio audio/wav, 3 bytes]\n" +
		"[resource file:///srv/a.txt]\n" +
		"[resource_link file:///srv/b.txt]\n" +
		"evil [2Jclear\n" +
		"[hologram]\n"
	if out.String() != want {
		t.Errorf("stdout:\n%q\nwant\n%q", out.String(), want)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestRenderCallJSON(t *testing.T) {
	a, out, _ := renderApp()
	if err := a.renderCall(json.RawMessage(mixedResult), true); err != nil {
		t.Fatal(err)
	}
	// The whole result, indented, nothing lost or reordered.
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(mixedResult), "", "  "); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String()+"\n" {
		t.Errorf("stdout:\n%s\nwant\n%s", out.String(), want.String())
	}
}

func TestRenderCallError(t *testing.T) {
	const res = `{"content":[{"type":"text","text":"no such file"}],"isError":true,"_meta":{"plexus/error":"timeout"}}`
	for _, asJSON := range []bool{false, true} {
		a, out, errOut := renderApp()
		err := a.renderCall(json.RawMessage(res), asJSON)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitError || ee.err != nil {
			t.Fatalf("json=%v: err = %v, want a silent exit 1", asJSON, err)
		}
		if asJSON {
			if !strings.Contains(out.String(), `"isError": true`) {
				t.Errorf("json stdout %q", out.String())
			}
			continue
		}
		if out.Len() != 0 {
			t.Errorf("an error result went to stdout: %q", out.String())
		}
		if !strings.HasPrefix(errOut.String(), "no such file\n") || !strings.Contains(errOut.String(), "--call-timeout") {
			t.Errorf("stderr %q", errOut.String())
		}
	}
}

func TestRenderCallUnknownOutcome(t *testing.T) {
	const res = `{"content":[{"type":"text","text":"connection lost"}],"isError":true,"_meta":{"plexus/outcome":"unknown","plexus/error":"transport_lost"}}`
	for _, asJSON := range []bool{false, true} {
		a, _, errOut := renderApp()
		_ = a.renderCall(json.RawMessage(res), asJSON)
		if !strings.Contains(errOut.String(), "warning: ") || !strings.Contains(errOut.String(), "may or may not have taken effect") {
			t.Errorf("json=%v: no unknown-outcome warning: %q", asJSON, errOut.String())
		}
	}
}

func TestRenderCallStructuredOnly(t *testing.T) {
	a, out, _ := renderApp()
	if err := a.renderCall(json.RawMessage(`{"content":[],"structuredContent":{"temp":21.5}}`), false); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\n  \"temp\": 21.5\n}\n" {
		t.Errorf("stdout %q", out.String())
	}
}

func TestRenderResourceAndPrompt(t *testing.T) {
	var b bytes.Buffer
	err := renderResource(&b, json.RawMessage(`{"contents":[{"uri":"file:///a","text":"hello"},{"uri":"file:///b.png","mimeType":"image/png","blob":"AAAA"}]}`))
	if err != nil || b.String() != "hello\n[blob file:///b.png image/png, 3 bytes]\n" {
		t.Errorf("resource: %q, %v", b.String(), err)
	}
	b.Reset()
	err = renderPrompt(&b, json.RawMessage(`{"messages":[
		{"role":"user","content":{"type":"text","text":"Summarize"}},
		{"role":"assistant","content":{"type":"resource_link","uri":"file:///x"}},
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`))
	if want := "user: Summarize\nassistant: [resource_link file:///x]\nuser: a\nuser: b\n"; err != nil || b.String() != want {
		t.Errorf("prompt: %q, %v; want %q", b.String(), err, want)
	}
}

func TestTableTrimsToWidth(t *testing.T) {
	tb := &table{header: []string{"NAME", "DESCRIPTION"}}
	tb.add("short", "a description that is much too long to fit\nand a second line")
	tb.add("x\x1b]0;title\x07", "ok")
	var b bytes.Buffer
	if err := tb.write(&b, 30); err != nil {
		t.Fatal(err)
	}
	want := "NAME       DESCRIPTION\n" +
		"short      a description that…\n" +
		"x]0;title  ok\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
}

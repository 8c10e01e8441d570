package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestListingKeepsServerBytes: each listed tool, resource and prompt is
// kept as the bytes the server wrote — its _meta, execution, annotations
// of a newer spec, white space and key order included — and so are the
// capabilities of its initialize answer (an extension's among them). A
// list the server does not implement ("method not found") is an empty
// list and a warning, not a server that cannot be added.
func TestListingKeepsServerBytes(t *testing.T) {
	var logs logBuffer
	s := fakeSpec(t, "raw", "FAKE_RICH", "1")
	s.DiscoverTimeout = 300 * 1e6
	s.Logger = logs.logger()
	c := mustConnect(t, s)

	d := c.Discovery()
	if len(d.Tools) != 2 {
		t.Fatalf("%d tools, want 2", len(d.Tools))
	}
	for i, want := range richTools {
		if !bytes.Equal(d.Tools[i], []byte(want)) {
			t.Errorf("tool %d kept as\n%s\nthe server wrote\n%s", i, d.Tools[i], want)
		}
	}
	if len(d.Resources) != 1 || string(d.Resources[0]) != richResource {
		t.Errorf("resources kept as %q, the server wrote %q", d.Resources, richResource)
	}
	if len(d.Prompts) != 1 || string(d.Prompts[0]) != richPrompt {
		t.Errorf("prompts kept as %q, the server wrote %q", d.Prompts, richPrompt)
	}
	if len(d.ResourceTemplates) != 0 {
		t.Errorf("templates of a server that has none: %q", d.ResourceTemplates)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "resources/templates/list") || !strings.Contains(d.Warnings[0], "Method not found") {
		t.Errorf("warnings = %q, want one naming resources/templates/list and the server's answer", d.Warnings)
	}
	if !strings.Contains(logs.String(), "server refused a list") {
		t.Errorf("no log line for the refused list: %s", logs.String())
	}

	var init struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(richInitialize), &init); err != nil {
		t.Fatal(err)
	}
	if got := c.RawCapabilities(); !bytes.Equal(got, init.Capabilities) {
		t.Errorf("capabilities kept as %s, the server wrote %s", got, init.Capabilities)
	}
	if got := c.InitializeResult(); string(got) != richInitialize {
		t.Errorf("initialize result kept as %s, the server wrote %s", got, richInitialize)
	}
}

// TestListPage: a page's items are each the bytes the server wrote, and a
// page that is no list fails.
func TestListPage(t *testing.T) {
	for _, k := range []listKind{listTools, listPrompts} {
		items, next, err := listPage(json.RawMessage(`{"`+k.member+`":[{"name":"a"} , {"name":"b"}],"nextCursor":"n"}`), k.member)
		if err != nil || next != "n" || len(items) != 2 || string(items[1]) != `{"name":"b"}` {
			t.Errorf("%s page: %q, %q, %v", k.method, items, next, err)
		}
	}
	if _, _, err := listPage(json.RawMessage(`{"tools":{}}`), "tools"); err == nil {
		t.Error("a tools member that is no array was taken")
	}
	if items, _, err := listPage(json.RawMessage(`{"tools":null}`), "tools"); err != nil || items != nil {
		t.Errorf("tools: null = %q, %v", items, err)
	}
	if !slices.Equal(names(t, []json.RawMessage{[]byte(richTools[0])}), []string{"show"}) {
		t.Error("names helper")
	}
}

// TestForwardPassesAnyMethodOn: a request of a method Plexus has no code
// for (the tasks extension's tasks/get) reaches the server as the client
// wrote it, and its result comes back as the server wrote it; a method
// the server does not know is its answer, not a lost connection.
func TestForwardPassesAnyMethodOn(t *testing.T) {
	s := fakeSpec(t, "raw", "FAKE_RICH", "1")
	s.DiscoverTimeout = 300 * 1e6
	c := mustConnect(t, s)
	res, err := c.Forward(t.Context(), "tasks/get", json.RawMessage(`{"taskId":"t-1"}`))
	if err != nil || string(res) != richTask {
		t.Errorf("tasks/get = %s, %v; the server wrote %s", res, err, richTask)
	}
	_, err = c.Forward(t.Context(), "tasks/nonesuch", nil)
	if je := AnswerError(err); je == nil || je.Code != -32601 || errors.Is(err, ErrTransportLost) {
		t.Errorf("an unknown method: %v, want the server's method-not-found answer", err)
	}
	// The server's stderr is read beside its answers: the line may come
	// after the answer.
	if !waitFor(30*time.Second, func() bool { return stderrHas(c, "got tasks/get") }) {
		t.Error("the server never got tasks/get")
	}
	for _, tc := range []struct {
		params string
		meta   map[string]any
		want   string
	}{
		{``, nil, `{}`},
		{`{"b":1,"a":2}`, nil, `{"b":1,"a":2}`},
		{`{"b":1}`, map[string]any{"v": "x"}, `{"_meta":{"v":"x"},"b":1}`},
		{`{"_meta":{"mine":1}}`, map[string]any{"v": "x"}, `{"_meta":{"mine":1}}`},
		{`[1]`, map[string]any{"v": "x"}, `[1]`},
	} {
		got, err := forwardParams(json.RawMessage(tc.params), tc.meta)
		if err != nil || string(got) != tc.want {
			t.Errorf("forwardParams(%s, %v) = %s, %v; want %s", tc.params, tc.meta, got, err, tc.want)
		}
	}
}

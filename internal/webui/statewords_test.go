package webui

import (
	"os"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/statewords"
)

// TestStateWords holds the page's stateText to the words of statewords:
// every word that is not the daemon's own state name is spelled in it,
// and no other word is.
func TestStateWords(t *testing.T) {
	b, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	start := strings.Index(js, "function stateText(st) {")
	end := strings.Index(js[start:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("app.js has no stateText")
	}
	body := js[start : start+end]
	daemon := map[string]bool{apitype.StateReady: true, apitype.StateStarting: true, apitype.StateFailed: true,
		apitype.StateBackoff: true, apitype.StateStopped: true}
	for _, w := range statewords.All {
		if !daemon[w] && !strings.Contains(body, "return '"+w+"'") {
			t.Errorf("stateText never says %q", w)
		}
	}
	for _, part := range strings.Split(body, "return '")[1:] {
		w := part[:strings.IndexByte(part, '\'')]
		if w != "unknown" && !strings.Contains(strings.Join(statewords.All, "|")+"|", w+"|") {
			t.Errorf("stateText says %q, which is not one of statewords.All", w)
		}
	}
}

package tui

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTerminalHidesURLKey: a server stored with a key in its URL's query
// (written there by hand) is edited in the real terminal: neither the list
// nor the form ever shows the key, the form shows the variable it will be
// kept in, and saving moves it there — the server, which answers only with
// the key, still comes up.
func TestTerminalHidesURLKey(t *testing.T) {
	needTmux(t)
	const canary = "CANARY-tmux-url-key-93"
	url := testenv.KeyedServer(t, func(r *http.Request) bool { return r.URL.Query().Get("api_key") == canary })
	e := testenv.New(t)
	settings := `{"mcp": {"servers": {"keyed": {"type": "http", "url": ` + strconv.Quote(url+"?api_key="+canary+"&team=blue") + `}}}}`
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()

	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", "env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	var screens []string
	screens = append(screens, x.waitText("keyed", "● ready"))
	x.must("send-keys", "-t", "tui", "Enter")
	form := x.waitText("edit keyed", "${KEYED_API_KEY}")
	screens = append(screens, form)
	x.must("send-keys", "-t", "tui", "C-s")
	screens = append(screens, x.waitText("saved keyed (ready"))
	for _, s := range screens {
		if strings.Contains(s, canary) {
			t.Fatalf("the terminal showed the key:\n%s", s)
		}
	}
	deadline := time.Now().Add(waitFor)
	for {
		ext, creds := files(t, e.Home)
		if strings.Contains(ext, "api_key=${KEYED_API_KEY}&team=blue") && !strings.Contains(ext, canary) && strings.Contains(creds, canary) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the key did not move to the managed store:\n%s", ext)
		}
		time.Sleep(100 * time.Millisecond)
	}
	x.waitText("● ready")
}

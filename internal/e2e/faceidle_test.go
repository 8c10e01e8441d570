package e2e

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFaceSessionWithOpenStreamLives: a client that holds its session's
// standalone GET stream open — as Claude Code, VS Code and the TypeScript
// SDK's client do, for the server's notifications — is there, however
// long it goes without a request: its session outlives the idle timeout,
// and its next call works. Only a session with no stream open expires
// (TestFaceSessionsExpire), and one whose stream drops ends at once.
func TestFaceSessionWithOpenStreamLives(t *testing.T) {
	t.Parallel()
	const idle = 1500 * time.Millisecond
	e, base, token := faceEnvWith(t, `"allowExternalCall": true, "sessionIdleMs": 1500`, "")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	open := func() string {
		code, id, _ := initialize(t, http.DefaultClient, base, token)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %q", code, id)
		}
		if code, body := sessionPOST(t, http.DefaultClient, base, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized: %d %s", code, body)
		}
		return id
	}

	// The standalone stream, held open past several idle timeouts.
	id := open()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, bufio.NewReader(resp.Body))
		ended <- err
	}()
	// The control: a session with no stream, opened at the same time.
	bare := open()
	// A session that calls a tool every idle/5 and holds no stream: its
	// calls (forwarded as frames) keep it alive.
	busy := open()
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"x"}}}`

	for deadline := time.Now().Add(3 * idle); time.Now().Before(deadline); {
		select {
		case err := <-ended:
			t.Errorf("the daemon ended the open stream of a live client after less than %v: %v", 3*idle, err)
			ended = nil
		case <-time.After(idle / 5):
		}
		if code, body := sessionPOST(t, http.DefaultClient, base, token, busy, call); code != http.StatusOK || !strings.Contains(body, `"x"`) {
			t.Fatalf("a call on a session that calls every %v: %d %s", idle/5, code, body)
		}
	}
	if code, body := sessionPOST(t, http.DefaultClient, base, token, id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Errorf("tools/list on the session with its stream open, after %v without a request: %d %s", 3*idle, code, body)
	}
	if code, body := sessionPOST(t, http.DefaultClient, base, token, bare, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("tools/list on the session with no stream, after %v idle: %d %s, want 404 (expired)", 3*idle, code, body)
	}
}

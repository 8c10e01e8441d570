package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// sessionPOST sends one JSON-RPC message on session id and returns the
// HTTP status and the answer's body.
func sessionPOST(t *testing.T, hc *http.Client, base, token, id, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// openStream opens session id's standalone GET stream over d. A client
// that reconnects may find its old stream not yet noticed gone (409): it
// tries again, as the SDKs' clients do.
func openStream(t *testing.T, d *dropper, base, id string) {
	t.Helper()
	for try := 0; ; try++ {
		req, _ := http.NewRequest("GET", base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := (&http.Client{Transport: d}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusConflict && try < 20 {
			resp.Body.Close()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %s", resp.Status)
		}
		go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
		return
	}
}

// freed waits until the profile takes a new session again (it holds one
// at most) and returns how long that took. After limit it fails the test
// with the daemon's face log lines and what seen adds (the client's own
// output), so that the failure shows which side lost track of the client.
func freed(t *testing.T, e *testenv.Env, hc *http.Client, base, token string, limit time.Duration, seen func() string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		code, id, _ := initialize(t, hc, base, token)
		if code == http.StatusOK {
			deleteSession(hc, base, token, id) // the place back for what comes next
			return time.Since(start)
		}
		if time.Since(start) > limit {
			var face []string
			for _, l := range strings.Split(e.DaemonOutput(), "\n") {
				// Leaving out the refusals of freed's own initialize.
				if strings.Contains(l, "face") && !strings.Contains(l, "a new session refused") {
					face = append(face, l)
				}
			}
			t.Fatalf("the profile still holds the session of a client gone %s ago (a new initialize: %d)\nthe daemon's face log:\n%s\n%s",
				limit, code, strings.Join(face, "\n"), seen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deleteSession ends session id as a client that leaves properly does.
func deleteSession(hc *http.Client, base, token, id string) {
	req, _ := http.NewRequest("DELETE", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", id)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
}

// streamingSession opens a session, initialized, with its standalone GET
// stream open over a dropper of its own.
func streamingSession(t *testing.T, hc *http.Client, base, token string) (string, *dropper) {
	t.Helper()
	code, id, _ := initialize(t, hc, base, token)
	if code != http.StatusOK {
		t.Fatalf("initialize: %d", code)
	}
	sessionPOST(t, hc, base, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	d := newDropper(token)
	openStream(t, d, base, id)
	return id, d
}

// TestDroppedStreamEndsSession: a session-era client that goes away
// without a DELETE — its standalone GET stream dropped, over HTTP, or a
// `plexus mcp` bridge killed — has its face session ended within seconds,
// not held until the idle expiry (30 minutes by default); a client whose
// stream broke and that opens it again at once keeps its session.
func TestDroppedStreamEndsSession(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnvWith(t, `"maxSessions": 1`, "")
	hc := &http.Client{}
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

	t.Run("reconnected", func(t *testing.T) {
		id, d := streamingSession(t, hc, base, token)
		d.drop()
		openStream(t, newDropper(token), base, id) // back at once
		time.Sleep(dropGraceSeen + time.Second)
		if code, _ := sessionPOST(t, hc, base, token, id, ping); code != http.StatusOK {
			t.Fatalf("a ping on the session of a client that came back: %d", code)
		}
		if code, _, _ := initialize(t, hc, base, token); code != http.StatusServiceUnavailable {
			t.Fatalf("a second session beside a live one: %d, want 503", code)
		}
		deleteSession(hc, base, token, id)
	})

	t.Run("http", func(t *testing.T) {
		id, d := streamingSession(t, hc, base, token)
		time.Sleep(200 * time.Millisecond)
		d.drop() // the client is gone
		took := freed(t, e, hc, base, token, dropGraceSeen+5*time.Second, func() string { return "" })
		t.Logf("the session was freed %s after its client dropped its stream", took.Round(10*time.Millisecond))
		if code, _ := sessionPOST(t, hc, base, token, id, ping); code != http.StatusNotFound {
			t.Errorf("a ping on the ended session: %d, want 404", code)
		}
	})

	t.Run("plexus-mcp-killed", func(t *testing.T) {
		cmd := exec.Command(e.Bin, "mcp")
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr testenv.SyncBuffer
		cmd.Stderr = &stderr
		if err := testenv.Start(t, cmd); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"editor","version":"1"}}}`+"\n")
		io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(stdin, ping+"\n")
		sc := bufio.NewScanner(stdout)
		for sc.Scan() && !strings.Contains(sc.Text(), `"id":2`) {
		}
		if code, _, _ := initialize(t, hc, base, token); code != http.StatusServiceUnavailable {
			t.Fatalf("beside the bridge's session a new one got %d, want 503", code)
		}
		cmd.Process.Kill() // no DELETE: the editor's bridge is gone
		took := freed(t, e, hc, base, token, dropGraceSeen+5*time.Second, func() string {
			return "the bridge's stderr:\n" + stderr.String()
		})
		t.Logf("the session was freed %s after its bridge was killed", took.Round(10*time.Millisecond))
	})
}

// dropGraceSeen is the face's grace for a client to come back after its
// stream dropped (face.dropGrace).
const dropGraceSeen = 3 * time.Second

package e2e

import (
	"bytes"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// boundedFace runs a daemon whose face has the given settings.
func boundedFace(t *testing.T, face string) (base, token string) {
	t.Helper()
	_, base, token = faceEnvWith(t, face, "")
	return base, token
}

// initialize opens a protocol session on the face and returns the HTTP
// status and the session id.
func initialize(t *testing.T, hc *http.Client, base, token string) (int, string, http.Header) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"n","version":"1"}}}`
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), resp.Header
}

// metric reads one unlabelled sample of the daemon's /metrics.
func metric(t *testing.T, base, token, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(scrape(t, base, token))
	if m == nil {
		t.Fatalf("no %s in /metrics", name)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFaceSessionsCapped: an attacker who opens a
// profile's mcp.face.maxSessions sessions and abandons them locks no
// client out, and their sessions are reclaimed at once, not after the
// idle time (30 minutes): a new client's initialize takes the place of
// the session idle longest, which is then gone (404). A session whose
// client holds its stream open is never taken; only when every session
// is busy is a new one refused, 503 with Retry-After; a DELETE frees a
// place at once.
func TestFaceSessionsCapped(t *testing.T) {
	t.Parallel()
	base, token := boundedFace(t, `"maxSessions": 3`)
	hc := &http.Client{}
	open := func() string {
		t.Helper()
		code, id, hdr := initialize(t, hc, base, token)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %q (Retry-After %q)", code, id, hdr.Get("Retry-After"))
		}
		time.Sleep(20 * time.Millisecond) // each idle since a moment of its own
		return id
	}
	alive := func(id string) bool {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	listen := func(id string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := (&http.Client{}).Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the stream of %s: %v %v", id, resp, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
	}
	held := open() // its client holds its stream open
	listen(held)
	abandoned := []string{open(), open()}
	// The table is full of abandoned sessions: new clients come in.
	first := open()
	second := open()
	for _, id := range abandoned {
		if alive(id) {
			t.Errorf("an abandoned session idle longest still lives beside new clients")
		}
	}
	if !alive(held) {
		t.Fatal("a session whose client holds its stream open was taken")
	}
	// Every session busy (each holds its stream): a new one is refused.
	listen(first)
	listen(second)
	code, _, hdr := initialize(t, hc, base, token)
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("an initialize with every session busy: %d, Retry-After %q; want 503 with Retry-After", code, hdr.Get("Retry-After"))
	}
	req, _ := http.NewRequest("DELETE", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", first)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	open()
	if !alive(held) || !alive(second) {
		t.Error("a busy session was taken")
	}
}

// TestFaceSessionsExpire: 5,000 sessions opened and never ended are
// reclaimed once idle for mcp.face.sessionIdleMs: the daemon's goroutines
// and memory come back to where they were.
func TestFaceSessionsExpire(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("opens 5,000 sessions")
	}
	base, token := boundedFace(t, `"sessionIdleMs": 3000, "maxSessions": 10000`)
	settle := func() (g, rss float64) {
		// Wait for the count to stop falling (the daemon settles after a
		// change); then read both.
		prev := -1.0
		for range 50 {
			g = metric(t, base, token, "go_goroutines")
			if g == prev {
				break
			}
			prev = g
			time.Sleep(200 * time.Millisecond)
		}
		return g, metric(t, base, token, "process_resident_memory_bytes")
	}
	g0, rss0 := settle()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 5000; i += 8 {
				if code, id, _ := initialize(t, hc, base, token); code != http.StatusOK || id == "" {
					t.Errorf("initialize %d: %d %q", i, code, id)
					return
				}
			}
		}()
	}
	wg.Wait()
	g1 := metric(t, base, token, "go_goroutines")
	if g1 < g0+1000 {
		t.Logf("goroutines with 5,000 sessions open: %.0f (idle %.0f)", g1, g0)
	}
	// The sessions expire, and then the daemon settles (a second after
	// the last of them ends): wait for both, up to a minute.
	var g2, rss2 float64
	for end := time.Now().Add(60 * time.Second); ; {
		time.Sleep(time.Second)
		g2, rss2 = settle()
		if g2 <= g0+10 && rss2 <= rss0+10<<20 || time.Now().After(end) {
			break
		}
	}
	t.Logf("goroutines: idle %.0f, 5,000 sessions %.0f, after expiry %.0f; RSS idle %.1f MiB, after expiry %.1f MiB",
		g0, g1, g2, rss0/(1<<20), rss2/(1<<20))
	if g2 > g0+10 {
		t.Errorf("after expiry the daemon has %.0f goroutines, idle it had %.0f: sessions were not reclaimed", g2, g0)
	}
	if rss2 > rss0+10<<20 {
		t.Errorf("after expiry RSS is %.1f MiB, idle it was %.1f MiB: more than +10 MiB", rss2/(1<<20), rss0/(1<<20))
	}
}

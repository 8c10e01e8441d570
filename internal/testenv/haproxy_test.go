package testenv

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// namedBackend answers every request with its name, and /stream with an
// event stream: one event, then a second once release is closed.
func namedBackend(t *testing.T, name string, release <-chan struct{}) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stream" {
			io.WriteString(w, name)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, c *http.Client, url string) (body string, reused bool) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	}))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b), reused
}

func TestHAProxyRoundRobinStreamsAndFailover(t *testing.T) {
	release := make(chan struct{})
	a := namedBackend(t, "a", release)
	b := namedBackend(t, "b", release)
	addr := StartHAProxy(t, a.Listener.Addr().String(), b.Listener.Addr().String()).Addr
	base := "http://" + addr
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer c.CloseIdleConnections()

	// Round robin per request, on one kept-alive client connection.
	var seen []string
	for i := range 6 {
		body, reused := get(t, c, base+"/")
		if i > 0 && !reused {
			t.Errorf("request %d opened a new connection: keep-alive to the balancer broken", i)
		}
		seen = append(seen, body)
	}
	if got := strings.Join(seen, ""); got != "ababab" && got != "bababa" {
		t.Errorf("backends in order %q, want alternating", got)
	}

	// An event stream is passed on as it is written, not buffered.
	resp, err := http.Get(base + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first event: %q, %v (the balancer held the stream back)", line, err)
	}
	close(release)
	r.ReadString('\n')
	if line, err := r.ReadString('\n'); err != nil || line != "data: second\n" {
		t.Fatalf("second event: %q, %v", line, err)
	}

	// A backend that stops answering: every request goes to the other one,
	// none fails (a refused connection is redispatched).
	b.Close()
	for i := range 6 {
		if body, _ := get(t, c, base+"/"); body != "a" {
			t.Errorf("request %d after b stopped answered by %q", i, body)
		}
	}
}

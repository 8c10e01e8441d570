package webui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestCookieFromOtherLoopbackPortIsRefused: cookies ignore ports, so a
// browser logged in to the page sends its session cookie to every port of
// 127.0.0.1. A page served on another port (by any local process) collects
// it through a same-site navigation to itself, in real Chromium; replayed
// like curl would, with and without forged Origin, Sec-Fetch-Site and page
// token, it opens no API call, read or write, and no command runs.
func TestCookieFromOtherLoopbackPortIsRefused(t *testing.T) {
	modules := browserModules(t)
	e := testenv.New(t)
	e.StartDaemon()
	link := strings.TrimSpace(e.MustRun("ui", "--no-browser"))
	base := strings.SplitN(link, "/login", 2)[0]

	var mu sync.Mutex
	var collected []string // Cookie headers the lure received
	lure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/collect" {
			mu.Lock()
			collected = append(collected, r.Header.Get("Cookie"))
			mu.Unlock()
			io.WriteString(w, "<title>collected</title>")
			return
		}
		io.WriteString(w, `<title>lure</title><script>location.href = "/collect"</script>`)
	}))
	defer lure.Close()
	if strings.HasPrefix(base, lure.URL) || !strings.HasPrefix(lure.URL, "http://127.0.0.1:") {
		t.Fatalf("the lure %s must be another port of the page's host %s", lure.URL, base)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "browser", "cookie.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "LOGIN_URL="+link, "LURE_URL="+lure.URL+"/")
	out, err := testenv.CombinedOutput(t, cmd)
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("the browser script failed: %v", err)
	}

	mu.Lock()
	cookies := strings.Join(collected, "; ")
	mu.Unlock()
	var session string
	for _, c := range strings.Split(cookies, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(c), "plexus_session="); ok {
			session = v
		}
	}
	if session == "" {
		t.Fatalf("the lure did not receive the session cookie (got %q): the attack's premise no longer holds, so this test proves nothing", cookies)
	}

	marker := filepath.Join(t.TempDir(), "ran")
	add := fmt.Sprintf(`{"name":"pwn","config":{"type":"stdio","command":"/bin/sh","args":["-c","touch %s"]}}`, marker)
	calls := []struct{ method, path, body string }{
		{"GET", "/api/v1/status", ""},
		{"GET", "/api/v1/servers", ""},
		{"GET", "/api/v1/secrets", ""},
		{"GET", "/api/v1/settings", ""},
		{"GET", "/api/v1/events", ""},
		{"GET", "/api/v1/events?page_token=" + strings.Repeat("0", 64), ""},
		{"POST", "/api/v1/servers", add},
		{"POST", "/api/v1/servers?verify=false", add},
		{"PUT", "/api/v1/secrets/PWN", `{"value":"x"}`},
		{"PUT", "/api/v1/settings", `{"callTimeoutMs":1}`},
		{"POST", "/api/v1/reload", `{}`},
		{"POST", "/logout", `{}`},
	}
	forgeries := map[string]map[string]string{
		"the cookie alone": {},
		"forged page headers": {"Origin": base, "Sec-Fetch-Site": "same-origin",
			"Content-Type": "application/json", "Accept": "application/json"},
		"a guessed page token": {"Origin": base, "Sec-Fetch-Site": "same-origin",
			"Content-Type": "application/json", "X-Plexus-Page-Token": strings.Repeat("0", 64)},
		"the session id as page token": {"Origin": base, "Sec-Fetch-Site": "same-origin",
			"Content-Type": "application/json", "X-Plexus-Page-Token": session},
	}
	client := &http.Client{Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for name, hdr := range forgeries {
		for _, c := range calls {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req, _ := http.NewRequest(c.method, base+c.path, body)
			req.Header.Set("Cookie", "plexus_session="+session)
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json") // as a replay with curl -H would
			}
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: %s %s: %v", name, c.method, c.path, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %s %s = %d, want 401 or 403", name, c.method, c.path, resp.StatusCode)
			}
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a replayed request ran a command")
	}
	if ls := e.MustRun("ls"); strings.Contains(ls, "pwn") {
		t.Errorf("a replayed request added a server:\n%s", ls)
	}
}

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestMetrics scrapes /metrics on the daemon's loopback address: it needs
// the token, refuses a foreign Host, and counts calls per server and
// outcome, server states and restarts — and holds no secret.
func TestMetrics(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	if r := e.Run(canary+"\n", "secret", "set", "EX_TOKEN"); r.Code != 0 {
		t.Fatalf("secret set: %+v", r)
	}
	e.MustRun("add", "example", "--env", "TOKEN=EX_TOKEN", "--", e.Bin, "example-server")
	waitState(t, e, "example", "ready", 20*time.Second)
	echo := toolNamed(t, tools(t, e), "example", "echo")
	e.MustRun("call", echo.Name, `{"text":"one"}`)
	e.MustRun("call", echo.Name, `{"text":"two"}`)

	var st apitype.Status
	if err := json.Unmarshal([]byte(e.MustRun("status", "--json")), &st); err != nil || st.HTTPAddr == "" {
		t.Fatalf("status has no HTTP address: %v %+v", err, st)
	}
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(e.Home, "token")); m != 0o600 {
		t.Errorf("token mode %v", m)
	}
	get := func(host, auth string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+st.HTTPAddr+"/metrics", nil)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := get("rebind.example:80", "Bearer "+strings.TrimSpace(string(tok))); code != http.StatusForbidden {
		t.Errorf("foreign Host: %d", code)
	}
	code, body := get("", "Bearer "+strings.TrimSpace(string(tok)))
	if code != 200 {
		t.Fatalf("metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`plexus_calls_total{outcome="ok",path="decoded",server="example"} 2`,
		`plexus_server_state{server="example",state="ready"} 1`,
		`plexus_server_state{server="example",state="backoff"} 0`,
		`plexus_server_restarts{server="example"} 0`,
		`plexus_server_tools{server="example"} 6`,
		`plexus_call_duration_seconds_count{server="example"} 2`,
	} {
		mustContain(t, "metrics", body, want)
	}
	if strings.Contains(body, canary) || strings.Contains(body, strings.TrimSpace(string(tok))) {
		t.Fatal("a secret is in the metrics")
	}
}

// TestFacePathsAreCounted: every request to the face is counted by the
// path it took and why — calls on a session forwarded as frames, one that
// asks for progress too, a request outside a session refused — and each
// call by how it was carried.
func TestFacePathsAreCounted(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	url := base + "/mcp"
	_, sid, _ := initialize(t, http.DefaultClient, base, token)
	rpc(t, url, token, sid, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 3 {
		rpc(t, url, token, sid, "2025-06-18", `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"`+echo+`","arguments":{"text":"a"}}}`)
	}
	rpc(t, url, token, sid, "2025-06-18", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"`+echo+`","arguments":{"text":"a"}}}`)
	rpc(t, url, token, "", "2025-06-18", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`plexus_face_requests_total{path="frame",reason="tools/call on a known session"} 4`,
		`plexus_face_requests_total{path="refused",reason="a session-era request outside a session"} 1`,
		`plexus_face_requests_total{path="sdk",reason="initialize"} 1`,
		`plexus_calls_total{outcome="ok",path="frame",server="example"} 4`,
	} {
		mustContain(t, "metrics", string(b), want)
	}
}

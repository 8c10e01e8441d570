package localapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestMain lets the test binary act as a foreign-uid client: the test
// re-executes itself as another user to hit the socket.
func TestMain(m *testing.M) {
	if sock := os.Getenv("PLEXUS_LOCALAPI_PROBE"); sock != "" {
		resp, err := unixClient(sock).Get("http://plexus/v1/status")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(0)
		}
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(b))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testToken is the token of the API the tests serve (apiHandler), which
// unixClient sends.
const testToken = "test-token-0123456789abcdef0123456789abcdef"

// apiHandler is the API over h, taking testToken.
func apiHandler(h *host.Host) *Handler {
	a := New(h, slog.New(slog.DiscardHandler))
	a.Token = testToken
	return a
}

// unixClient reaches the socket sock, sending testToken.
func unixClient(sock string) *http.Client {
	return &http.Client{Transport: withToken{&http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}}
}

// withToken sends testToken with every request that names none.
type withToken struct{ base http.RoundTripper }

func (t withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+testToken)
	}
	return t.base.RoundTrip(r)
}

// serve runs the API over a real store on a unix socket.
func serve(t *testing.T) (sock string, c *http.Client) {
	t.Helper()
	return serveIn(t, t.TempDir())
}

func serveIn(t *testing.T, dir string) (sock string, c *http.Client) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{Store: st})
	t.Cleanup(h.Close)
	sock = filepath.Join(dir, "plexus.sock") // where client.New(dir) looks, and the token:
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: apiHandler(h), ConnContext: ConnContext}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock, unixClient(sock)
}

func decodeError(t *testing.T, resp *http.Response) apitype.ErrorBody {
	t.Helper()
	defer resp.Body.Close()
	var e apitype.Error
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Err.Code == "" {
		t.Fatalf("status %d: body is not the API error shape: %v", resp.StatusCode, err)
	}
	return e.Err
}

func do(t *testing.T, c *http.Client, method, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, "http://plexus"+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestErrorsHaveOneShape(t *testing.T) {
	_, c := serve(t)
	for _, tc := range []struct {
		method, path, body string
		hdr                []string
		status             int
		code               string
		want               string
	}{
		{"GET", "/v2/nothing", "", nil, 404, apitype.CodeNotFound, "no such API route"},
		{"GET", "/v1/servers/nope", "", nil, 404, apitype.CodeNotFound, `no server named "nope"`},
		{"POST", "/v1/servers", `{"name":"x",`, nil, 400, apitype.CodeBadRequest, "malformed request body"},
		{"POST", "/v1/servers", `{"name":"x","config":{"type":"stdio","command":"x","colour":1}}`, nil, 400, apitype.CodeBadRequest, "not valid"},
		{"POST", "/v1/servers", `{"name":"x","bogus":1}`, nil, 400, apitype.CodeBadRequest, "unknown field"},
		{"POST", "/v1/servers", `{"name":"x","config":{"type":"stdio","command":"sh"}}`, []string{"If-Match", "7"}, 409, apitype.CodeStale, "revision"},
		{"PUT", "/v1/secrets/A", `{"value":"s3cr3t-canary`, nil, 400, apitype.CodeBadRequest, "malformed"},
		{"POST", "/v1/call", `{"name":"mcp_x_y_z","arguments":[1]}`, nil, 400, apitype.CodeBadRequest, "JSON object"},
		{"POST", "/v1/call", `{"name":"mcp_x_y_z"}`, nil, 404, apitype.CodeNotFound, "no tool"},
	} {
		resp := do(t, c, tc.method, tc.path, tc.body, tc.hdr...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		e := decodeError(t, resp)
		if e.Code != tc.code || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %s: %+v, want code %s and %q", tc.method, tc.path, e, tc.code, tc.want)
		}
		if strings.Contains(e.Message, "s3cr3t") {
			t.Errorf("error echoes the request body: %s", e.Message)
		}
	}
	// Problems name their key path.
	resp := do(t, c, "POST", "/v1/servers", `{"name":"x","config":{"type":"stdio","command":"x","colour":1}}`)
	e := decodeError(t, resp)
	if len(e.Problems) != 1 || e.Problems[0].Path != "mcp.servers.x.colour" {
		t.Errorf("problems: %+v", e.Problems)
	}
}

func TestSecretsAreWriteOnly(t *testing.T) {
	_, c := serve(t)
	const canary = "canary-61e0-write-only"
	resp := do(t, c, "PUT", "/v1/secrets/TOKEN", `{"value":"`+canary+`"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("set: %d", resp.StatusCode)
	}
	for _, p := range []string{"/v1/secrets", "/v1/status", "/v1/servers"} {
		resp := do(t, c, "GET", p, "")
		b, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(b), canary) {
			t.Errorf("GET %s reveals the secret: %s", p, b)
		}
		if p == "/v1/secrets" && !strings.Contains(string(b), `"TOKEN"`) {
			t.Errorf("GET /v1/secrets does not list the name: %s", b)
		}
	}
}

// TestFullDiskReportedAsFullNotAsBugAsRoot fills the home's file system (a
// tiny tmpfs) and saves a secret: the answer says the disk is full and
// where, and nothing calls it a bug.
func TestFullDiskReportedAsFullNotAsBugAsRoot(t *testing.T) {
	testenv.NeedRoot(t, "the full disk is a tmpfs mounted for the test")
	dir := t.TempDir()
	testenv.MountTmpfs(t, dir, "128k")
	_, c := serveIn(t, dir)
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 4096); ; {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	for {
		if _, err := f.Write([]byte{0}); err != nil {
			break
		}
	}
	f.Close()
	resp := do(t, c, "PUT", "/v1/secrets/API_KEY", `{"value":"`+strings.Repeat("k", 9000)+`"}`, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusInsufficientStorage {
		t.Errorf("status %d, want 507", resp.StatusCode)
	}
	e := decodeError(t, resp)
	home := filepath.Join(dir, "home")
	if e.Code != apitype.CodeNoSpace || !strings.Contains(e.Message, "is full") || !strings.Contains(e.Message, home) {
		t.Errorf("error %+v: want code %s saying the disk holding %s is full", e, apitype.CodeNoSpace, home)
	}
	if strings.Contains(e.Message+e.Hint, "bug") || !strings.Contains(e.Hint, "free space") {
		t.Errorf("hint %q: want advice to free space, not a bug report", e.Hint)
	}
}

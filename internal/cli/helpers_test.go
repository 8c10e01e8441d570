package cli

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// result is one run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the CLI with args and stdin, against whatever PLEXUS_HOME the test
// set.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(t.Context(), args, Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return result{code, out.String(), errOut.String()}
}

// runAt runs the CLI with args as run does, with its clock stopped at now.
func runAt(t *testing.T, now time.Time, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{env: Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, clock: func() time.Time { return now }}
	code := a.run(t.Context(), args)
	return result{code, out.String(), errOut.String()}
}

// reply is a canned answer of the fake daemon.
type reply struct {
	status int
	body   string
}

// seen is one request as the fake daemon received it.
type seen struct {
	method, uri, ifMatch, body string
}

// fakeDaemon answers the CLI's requests on a unix socket in PLEXUS_HOME with
// canned JSON, keyed by "METHOD URI". It checks the CLI's use of the API, not
// the daemon; the real end-to-end tests run the real daemon.
type fakeDaemon struct {
	mu   sync.Mutex
	reqs []seen
}

func startFake(t *testing.T, routes map[string]reply) *fakeDaemon {
	t.Helper()
	return startFakeStreams(t, routes, nil)
}

// startFakeStreams is startFake with handlers for the routes that stream,
// keyed like routes.
func startFakeStreams(t *testing.T, routes map[string]reply, streams map[string]http.HandlerFunc) *fakeDaemon {
	t.Helper()
	home := shortTempDir(t)
	t.Setenv("PLEXUS_HOME", home)
	f := &fakeDaemon{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.RequestURI()
		if h, ok := streams[key]; ok {
			f.mu.Lock()
			f.reqs = append(f.reqs, seen{r.Method, r.URL.RequestURI(), "", ""})
			f.mu.Unlock()
			h(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seen{r.Method, r.URL.RequestURI(), r.Header.Get("If-Match"), string(b)})
		f.mu.Unlock()
		rep, ok := routes[key]
		if !ok {
			rep = reply{404, `{"error":{"code":"not_found","message":"no canned answer for ` + key + `"}}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	l, err := net.Listen("unix", filepath.Join(home, "plexus.sock"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return f
}

// request returns the one request sent with method, failing if there is not
// exactly one.
func (f *fakeDaemon) request(t *testing.T, method string) seen {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var found []seen
	for _, r := range f.reqs {
		if r.method == method {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s requests reached the daemon, want 1: %+v", len(found), method, f.reqs)
	}
	return found[0]
}

// bodyOf returns the body of the last request to "METHOD URI".
func (f *fakeDaemon) bodyOf(t *testing.T, key string) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.reqs) - 1; i >= 0; i-- {
		if r := f.reqs[i]; r.method+" "+r.uri == key {
			return r.body
		}
	}
	t.Fatalf("no request %s reached the daemon", key)
	return ""
}

func (f *fakeDaemon) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// shortTempDir keeps socket paths under the 104-byte sun_path limit that
// long test names in t.TempDir() could exceed.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pxcli")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

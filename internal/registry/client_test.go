package registry

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
)

func TestListPagesAndSearch(t *testing.T) {
	reg := registrytest.Start(t)
	c := NewClient(nil)
	ctx := context.Background()
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, src, err := c.List(ctx, reg.URL, Query{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if src.Cached || src.Offline || src.FetchedAt.IsZero() {
			t.Errorf("source = %+v", src)
		}
		for _, e := range p.Entries {
			names = append(names, e.Server.Name+"@"+e.Server.Version)
		}
		if p.NextCursor == "" {
			if pages != 2 {
				t.Errorf("%d pages of 3 for 7 servers", pages+1)
			}
			break
		}
		cursor = p.NextCursor
	}
	// The latest version of each: github's 0.20.2 is not listed.
	want := "com.mcpbundles/agent-interviews@1.0.0 io.github.bytedance/mcp-server-filesystem@1.0.0 io.github.github/github-mcp-server@0.24.0 " +
		"io.github.modelcontextprotocol/server-memory@2026.8.31 io.github.motherduckdb/mcp-server-motherduck@0.8.0 " +
		"io.github.neo4j-contrib/mcp-neo4j-cypher@1.0.0 io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("listed\n%s\nwant\n%s", got, want)
	}
	p, _, err := c.List(ctx, reg.URL, Query{Search: "GitHub-MCP"})
	if err != nil || len(p.Entries) != 1 || p.Entries[0].Server.Name != "io.github.github/github-mcp-server" {
		t.Errorf("search github-mcp: %d entries, %v", len(p.Entries), err)
	}
	e, _, err := c.Get(ctx, reg.URL, "io.github.github/github-mcp-server", "0.20.2", false)
	if err != nil || e.Server.Version != "0.20.2" || e.IsLatest || e.Status != "active" {
		t.Errorf("get 0.20.2: %+v, %v", e, err)
	}
	vs, _, err := c.Versions(ctx, reg.URL, "io.github.github/github-mcp-server", false)
	if err != nil || len(vs) != 2 {
		t.Errorf("versions: %d, %v", len(vs), err)
	}
	_, _, err = c.Get(ctx, reg.URL, "io.example/nothing", "latest", false)
	if re, ok := err.(*Error); !ok || !re.NotFound || !strings.Contains(err.Error(), "no such server: Server not found") {
		t.Errorf("a missing server: %v", err)
	}
}

// TestCacheAndOffline: a fresh answer is not asked for again; a registry
// that is down gives the cached answer, marked offline with the reason;
// one that answers garbage gives a clear error and changes nothing.
func TestCacheAndOffline(t *testing.T) {
	reg := registrytest.Start(t)
	dir := filepath.Join(t.TempDir(), "cache")
	c := NewClient(OpenCache(dir))
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	q := Query{Search: "memory"}
	first, src, err := c.List(ctx, reg.URL, q)
	if err != nil || src.Cached || len(first.Entries) != 1 {
		t.Fatalf("first: %+v %+v %v", first, src, err)
	}
	hits := reg.Requests()
	now = now.Add(time.Minute)
	_, src, err = c.List(ctx, reg.URL, q)
	if err != nil || !src.Cached || src.Offline || reg.Requests() != hits {
		t.Errorf("a fresh answer was asked for again: %+v, %v", src, err)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("%d cache files", len(files))
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("cache folder mode %v", fi.Mode().Perm())
	}
	cacheFile := filepath.Join(dir, files[0].Name())
	before, _ := os.ReadFile(cacheFile)

	now = now.Add(time.Hour)
	reg.SetMode(registrytest.Garbage)
	_, _, err = c.List(ctx, reg.URL, q)
	if err == nil || !strings.Contains(err.Error(), "not an MCP registry's answer: it is not JSON") {
		t.Errorf("garbage: %v", err)
	}
	reg.SetMode(registrytest.WrongShape)
	if _, _, err = c.List(ctx, reg.URL, q); err == nil || !strings.Contains(err.Error(), `it has no "servers" list`) {
		t.Errorf("wrong shape: %v", err)
	}
	if after, _ := os.ReadFile(cacheFile); string(after) != string(before) {
		t.Error("a garbage answer changed the cache")
	}

	for _, m := range []registrytest.Mode{registrytest.Down, registrytest.Failing} {
		reg.SetMode(m)
		p, src, err := c.List(ctx, reg.URL, q)
		if err != nil || !src.Offline || !src.Cached || len(p.Entries) != 1 || !src.FetchedAt.Equal(now.Add(-time.Hour-time.Minute)) {
			t.Errorf("mode %d: %+v %+v %v", m, p, src, err)
		}
		if m == registrytest.Failing && !strings.Contains(src.Reason, "HTTP 500: database unavailable") {
			t.Errorf("reason = %q", src.Reason)
		}
		if m == registrytest.Down && !strings.Contains(src.Reason, "cannot be reached") {
			t.Errorf("reason = %q", src.Reason)
		}
		// Nothing cached for this one: the error says so.
		_, _, err = c.List(ctx, reg.URL, Query{Search: "neo4j"})
		if err == nil {
			t.Errorf("mode %d: an uncached search answered", m)
		}
	}
}

func TestClientBounds(t *testing.T) {
	big := strings.Repeat("x", maxPageBytes)
	mux := http.NewServeMux()
	mux.HandleFunc("/big/v0.1/servers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers":[],"x":"` + big + `"}`))
	})
	mux.HandleFunc("/html/v0.1/servers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html>`))
	})
	mux.HandleFunc("/teapot/v0.1/servers", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})
	mux.HandleFunc("/many/v0.1/servers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers":[` + strings.Repeat(`{},`, maxListEntries) + `{}]}`))
	})
	mux.HandleFunc("/escape/v0.1/servers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers":[{"server":{"name":"io.example/evil","version":"1.0.0","description":"\u001b]52;c;cm0gLXJmIH4=\u0007 clipboard"}},{"server":{"name":"bad name","version":"1"}}]}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := NewClient(nil)
	ctx := context.Background()
	for path, want := range map[string]string{
		"/big":    "more than 8 MiB",
		"/html":   "answered with text/html, not JSON",
		"/teapot": "answered HTTP 418",
		"/many":   "more than the 200 a page may hold",
	} {
		if _, _, err := c.List(ctx, srv.URL+path, Query{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want …%s…", path, err, want)
		}
	}
	p, _, err := c.List(ctx, srv.URL+"/escape", Query{})
	if err != nil || len(p.Entries) != 1 || p.Skipped != 1 {
		t.Fatalf("escape: %+v %v", p, err)
	}
	if d := p.Entries[0].Server.Description; strings.ContainsAny(d, "\x1b\x07") {
		t.Errorf("a control character reached the description: %q", d)
	}
}

// TestNoRedirectToAnotherScheme: an https registry redirected to plain
// http is not followed.
func TestNoRedirectToAnotherScheme(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers":[]}`))
	}))
	t.Cleanup(plain.Close)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(tls.Close)
	c := NewClient(nil)
	c.http.Transport = tls.Client().Transport
	_, _, err := c.List(context.Background(), tls.URL, Query{})
	if err == nil || !strings.Contains(err.Error(), "a redirect from https to http:// is refused") {
		t.Errorf("err = %v", err)
	}
}

// TestCacheRemovesStrayTemps: the temporary file of a write killed before
// its rename goes at the next write once it is old enough to be no write
// in progress; a younger one and a file a person named alike stay.
func TestCacheRemovesStrayTemps(t *testing.T) {
	dir := t.TempDir()
	c := OpenCache(dir)
	hash := strings.Repeat("ab", 16)
	old := filepath.Join(dir, "."+hash+".json.tmp-123456")
	young := filepath.Join(dir, "."+hash+".json.tmp-654321")
	mine := filepath.Join(dir, "."+hash+".json.tmp-mine")
	for _, p := range []string{old, young, mine} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * strayAge)
	for _, p := range []string{old, mine} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	c.store("https://registry.example/v0/servers", time.Now(), []byte(`{}`))
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a killed write's temporary file stayed: %v", err)
	}
	for _, p := range []string{young, mine} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s went: %v", filepath.Base(p), err)
		}
	}
	if _, ok := c.load("https://registry.example/v0/servers"); !ok {
		t.Error("the answer written was not kept")
	}
}

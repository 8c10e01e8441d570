// Package registrytest runs an MCP registry for tests: the registry API's
// server list with search and cursor paging, a server's versions and one
// version, over real HTTP on 127.0.0.1, serving the real registry answers
// in testdata (README.md there says which). A test can point a remote at a
// server of its own, add entries, and make the registry fail: go down,
// answer 500, or answer garbage.
package registrytest

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

//go:embed testdata/*.json
var testdata embed.FS

// Mode is how the registry answers.
type Mode int

const (
	// Normal answers as a registry does.
	Normal Mode = iota
	// Down closes every connection without an answer.
	Down
	// Failing answers HTTP 500 with the API's error body.
	Failing
	// Garbage answers 200 with bytes that are not JSON.
	Garbage
	// WrongShape answers 200 with JSON that is not a registry's answer.
	WrongShape
)

// Registry is a running test registry.
type Registry struct {
	// URL is its base URL (without /v0.1).
	URL string

	mu      sync.Mutex
	entries []entry // sorted by name, then publication
	mode    Mode
	hits    atomic.Int64
}

type entry struct {
	name, version string
	latest        bool
	doc           map[string]any
}

// Start runs a registry serving testdata until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{}
	files, err := testdata.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".json") {
			continue
		}
		b, err := testdata.ReadFile("testdata/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Add(b); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Documents returns the testdata answers by file name.
func Documents() map[string][]byte {
	out := map[string][]byte{}
	files, _ := testdata.ReadDir("testdata")
	for _, f := range files {
		b, err := testdata.ReadFile("testdata/" + f.Name())
		if err == nil {
			out[f.Name()] = b
		}
	}
	return out
}

// Add adds a ServerResponse document.
func (r *Registry) Add(doc []byte) error {
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return err
	}
	srv, _ := m["server"].(map[string]any)
	name, _ := srv["name"].(string)
	version, _ := srv["version"].(string)
	if name == "" || version == "" {
		return fmt.Errorf("no server name or version")
	}
	latest := false
	if meta, ok := m["_meta"].(map[string]any); ok {
		if off, ok := meta["io.modelcontextprotocol.registry/official"].(map[string]any); ok {
			latest, _ = off["isLatest"].(bool)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, entry{name: name, version: version, latest: latest, doc: m})
	slices.SortStableFunc(r.entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return nil
}

// SetRemoteURL points every remote of every version of server name at u
// (a server of the test's own).
func (r *Registry) SetRemoteURL(name, u string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.name != name {
			continue
		}
		srv := e.doc["server"].(map[string]any)
		if remotes, ok := srv["remotes"].([]any); ok {
			for _, rm := range remotes {
				rm.(map[string]any)["url"] = u
			}
		}
	}
}

// SetMode makes the registry answer as m says from now on.
func (r *Registry) SetMode(m Mode) {
	r.mu.Lock()
	r.mode = m
	r.mu.Unlock()
}

// Requests counts the requests the registry received.
func (r *Registry) Requests() int { return int(r.hits.Load()) }

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.hits.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.mode {
	case Down:
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case Failing:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "database unavailable"})
		return
	case Garbage:
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("\x1b[31m<html>not json at all"))
		return
	case WrongShape:
		writeJSON(w, http.StatusOK, map[string]any{"items": []string{"a"}})
		return
	}
	if req.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	// The server's name is one escaped path segment (com.example%2Fname).
	rest, ok := strings.CutPrefix(req.URL.EscapedPath(), "/v0.1/servers")
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Not found"})
		return
	}
	if rest == "" || rest == "/" {
		r.list(w, req.URL.Query())
		return
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	name, err := url.PathUnescape(parts[0])
	if err != nil || len(parts) < 2 || parts[1] != "versions" || len(parts) > 3 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Not found"})
		return
	}
	var versions []entry
	for _, e := range r.entries {
		if e.name == name {
			versions = append(versions, e)
		}
	}
	if len(versions) == 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Server not found"})
		return
	}
	if len(parts) == 2 {
		out := []any{}
		for i := len(versions) - 1; i >= 0; i-- {
			out = append(out, versions[i].doc)
		}
		writeJSON(w, http.StatusOK, map[string]any{"servers": out, "metadata": map[string]any{"count": len(out)}})
		return
	}
	version, _ := url.PathUnescape(parts[2])
	for _, e := range versions {
		if e.version == version || version == "latest" && e.latest {
			writeJSON(w, http.StatusOK, e.doc)
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "Server not found"})
}

// list is GET /v0.1/servers: search (a substring of the name), version
// (latest), limit, and an opaque cursor (here: the index to go on from).
func (r *Registry) list(w http.ResponseWriter, q url.Values) {
	limit := 30
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "limit must be between 1 and 100"})
			return
		}
		limit = n
	}
	from := 0
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid cursor"})
			return
		}
		from = n
	}
	search := strings.ToLower(q.Get("search"))
	var hits []entry
	for _, e := range r.entries {
		if q.Get("version") == "latest" && !e.latest {
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(e.name), search) {
			continue
		}
		hits = append(hits, e)
	}
	out := []any{}
	for i := from; i < len(hits) && len(out) < limit; i++ {
		out = append(out, hits[i].doc)
	}
	meta := map[string]any{"count": len(out)}
	if from+len(out) < len(hits) {
		meta["nextCursor"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(from + len(out))))
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": out, "metadata": meta})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

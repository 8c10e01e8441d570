package peer

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// tlsReplica serves h as replica id would on the channel: TLS under a
// certificate of its own, whose fingerprint it returns.
func tlsReplica(t *testing.T, h http.Handler) (addr, fp string) {
	t.Helper()
	cert, fp, err := NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = ServerTLS(cert)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "https://"), fp
}

// TestRouter: a request on this replica's session, or without one, is
// served here; one on another replica's session is passed there, signed
// for it, over TLS to the certificate its row names, and answered as it
// answers; a replica without a row, one that cannot be dialled, one whose
// certificate is not its row's, and one whose address another replica
// took are 404 (the client opens a new session); one that broke off after
// the request was sent is 502 (outcome unknown); while the database is
// away, the rows last read are used, and a replica never read is 503.
func TestRouter(t *testing.T) {
	keys := NewKeys([][]byte{[]byte("key")})
	other, self, gone, dead, broken, impostor, moved := NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID()
	holderAddr, holderFP := tlsReplica(t, NewGuard(keys, other, quiet, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", "holder")
		io.WriteString(w, r.Header.Get("Authorization"))
	})))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := ln.Addr().String()
	ln.Close() // nothing listens there
	brokenAddr, brokenFP := tlsReplica(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // the request arrived; no answer
	}))
	rows := &fakeReplicas{rows: map[string]Replica{
		other:    {ID: other, Addr: holderAddr, FP: holderFP},
		dead:     {ID: dead, Addr: deadAddr, FP: holderFP},
		broken:   {ID: broken, Addr: brokenAddr, FP: brokenFP},
		impostor: {ID: impostor, Addr: brokenAddr, FP: holderFP}, // another's certificate there
		moved:    {ID: moved, Addr: holderAddr, FP: holderFP},    // its address now the holder's
	}}
	reg := NewRegistry(rows, self, "127.0.0.1:1", "", quiet)
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Served-By", "local") })
	tr := NewTransport(keys, self, DirectTransport(reg.Find))
	front := httptest.NewServer(NewRouter(reg, tr, local, quiet))
	defer front.Close()
	defer tr.base.(*http.Transport).CloseIdleConnections()

	do := func(base, session string) (int, string, string) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer member")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Served-By"), string(b)
	}
	for _, tc := range []struct {
		name, session string
		status        int
		by            string
	}{
		{"no session", "", 200, "local"},
		{"this replica's session", NewSessionID(self), 200, "local"},
		{"a one-machine daemon's session", "3f1c2e0b-9d7a-4c1e-8f00-0a1b2c3d4e5f", 200, "local"},
		{"another replica's session", NewSessionID(other), 200, "holder"},
		{"a gone replica's session", NewSessionID(gone), 404, ""},
		{"a replica that cannot be dialled", NewSessionID(dead), 404, ""},
		{"a replica whose certificate is not its row's", NewSessionID(impostor), 404, ""},
		{"a replica whose address another took", NewSessionID(moved), 404, ""},
		{"a replica that broke off", NewSessionID(broken), 502, ""},
	} {
		status, by, body := do(front.URL, tc.session)
		if status != tc.status || by != tc.by {
			t.Errorf("%s: %d by %q, want %d by %q (%s)", tc.name, status, by, tc.status, tc.by, body)
		}
		if tc.by == "holder" && body != "Bearer member" {
			t.Errorf("%s: the client's Authorization did not reach the holder: %q", tc.name, body)
		}
	}

	// The database goes away: the rows read before serve on.
	rows.mu.Lock()
	rows.err = errors.New("the database is away")
	rows.mu.Unlock()
	reg.Beat(t.Context())
	if status, by, _ := do(front.URL, NewSessionID(other)); status != 200 || by != "holder" {
		t.Errorf("a session on another replica while the database is away: %d by %q", status, by)
	}
	down := NewRegistry(rows, self, "127.0.0.1:1", "", quiet)
	front2 := httptest.NewServer(NewRouter(down, tr, local, quiet))
	defer front2.Close()
	if status, _, _ := do(front2.URL, NewSessionID(other)); status != http.StatusServiceUnavailable {
		t.Errorf("the database cannot say where the session is, and never did: %d, want 503", status)
	}
}

// TestRouterSendsResultReads: outside a session, a resources/read of a
// kept result whose id names another replica goes to that replica, its
// body and the client's Authorization whole; one of this replica's, one
// whose id names no replica, any other request that mentions a result,
// and a read on a session stay here (a session's read goes with its
// session); a read of a gone or unreachable replica's result is answered
// here with MCP's "resource not found", naming the replica, to the
// request's id.
func TestRouterSendsResultReads(t *testing.T) {
	keys := NewKeys([][]byte{[]byte("key")})
	other, self, gone, dead := NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID()
	holderAddr, holderFP := tlsReplica(t, NewGuard(keys, other, quiet, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", "holder")
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, r.Header.Get("Authorization")+" "+string(b))
	})))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := ln.Addr().String()
	ln.Close()
	rows := &fakeReplicas{rows: map[string]Replica{
		other: {ID: other, Addr: holderAddr, FP: holderFP},
		dead:  {ID: dead, Addr: deadAddr, FP: holderFP},
	}}
	reg := NewRegistry(rows, self, "127.0.0.1:1", "", quiet)
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", "local")
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	tr := NewTransport(keys, self, DirectTransport(reg.Find))
	rt := NewRouter(reg, tr, local, quiet)
	rt.ResultsURI = "plexus://results/"
	front := httptest.NewServer(rt)
	defer front.Close()
	defer tr.base.(*http.Transport).CloseIdleConnections()

	read := func(id string) string {
		return `{"jsonrpc":"2.0","id":"r-7","method":"resources/read","params":{"uri":"plexus://results/` + id + `/2"}}`
	}
	do := func(session, body string) (int, string, string) {
		req, _ := http.NewRequest("POST", front.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer member")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Served-By"), string(b)
	}
	otherResult := NewSessionID(other)
	for _, tc := range []struct {
		name, session, body string
		by                  string
	}{
		{"another replica's result", "", read(otherResult), "holder"},
		{"this replica's result", "", read(NewSessionID(self)), "local"},
		{"an id that names no replica", "", read(strings.Repeat("ab", 16)), "local"},
		{"a call that mentions another replica's result", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"uri":"plexus://results/` + otherResult + `/1"}}}`, "local"},
		{"a read on a session of this replica", NewSessionID(self), read(otherResult), "local"},
		{"a body too long to be a read", "", read(otherResult) + strings.Repeat(" ", maxRead), "local"},
	} {
		status, by, body := do(tc.session, tc.body)
		if status != 200 || by != tc.by {
			t.Errorf("%s: %d by %q, want 200 by %q (%.200s)", tc.name, status, by, tc.by, body)
			continue
		}
		want := strings.TrimSpace(tc.body)
		if tc.by == "holder" {
			want = "Bearer member " + tc.body
		}
		if strings.TrimSpace(body) != want {
			t.Errorf("%s: the body did not arrive whole: %.200q", tc.name, body)
		}
	}
	for _, tc := range []struct{ name, replica string }{{"a gone replica", gone}, {"a replica that cannot be dialled", dead}} {
		id := NewSessionID(tc.replica)
		status, by, body := do("", read(id))
		var answer struct {
			ID    string `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &answer); err != nil || status != 200 || by != "" ||
			answer.ID != "r-7" || answer.Error.Code != codeResourceNotFound ||
			!strings.Contains(answer.Error.Message, "the replica that kept it ("+tc.replica+") is gone") {
			t.Errorf("a read of %s's result: %d by %q %s", tc.name, status, by, body)
		}
	}
}

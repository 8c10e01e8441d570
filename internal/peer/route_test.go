package peer

import (
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

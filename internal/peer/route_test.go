package peer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeReplicas is a Table of fixed addresses, or an error.
type fakeReplicas struct {
	addrs map[string]string
	err   error
}

var errNoRow = errors.New("no row")

func (f fakeReplicas) Beat(context.Context, string, string) error { return nil }
func (f fakeReplicas) Leave(context.Context, string) error        { return nil }
func (f fakeReplicas) Replica(_ context.Context, id string, _ time.Duration) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	if a, ok := f.addrs[id]; ok {
		return a, nil
	}
	return "", errNoRow
}

// TestRouter: a request on this replica's session, or without one, is
// served here; one on another live replica's session is passed there with
// the channel's credential and answered as it answers; a replica that is
// gone or cannot be dialled is 404 (the client opens a new session); one
// that broke off after the request was sent is 502 (outcome unknown);
// one the database cannot place is 503.
func TestRouter(t *testing.T) {
	creds := NewCredentials([][]byte{[]byte("key")})
	other, self, gone, dead, broken := NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID(), NewReplicaID()
	holder := httptest.NewServer(Guard(creds, slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", "holder")
		io.WriteString(w, r.Header.Get("Authorization"))
	})))
	defer holder.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := ln.Addr().String()
	ln.Close() // nothing listens there
	breaker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // the request arrived; no answer
	}))
	defer breaker.Close()
	table := fakeReplicas{addrs: map[string]string{
		other:  strings.TrimPrefix(holder.URL, "http://"),
		dead:   deadAddr,
		broken: strings.TrimPrefix(breaker.URL, "http://"),
	}}
	reg := NewRegistry(table, errNoRow, self, "127.0.0.1:1", slog.New(slog.DiscardHandler))
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Served-By", "local") })
	rt := NewRouter(reg, creds, local, slog.New(slog.DiscardHandler))
	front := httptest.NewServer(rt)
	defer front.Close()

	do := func(session string) (int, string, string) {
		req, _ := http.NewRequest("POST", front.URL+"/mcp", strings.NewReader("{}"))
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
		{"a replica that broke off", NewSessionID(broken), 502, ""},
	} {
		status, by, body := do(tc.session)
		if status != tc.status || by != tc.by {
			t.Errorf("%s: %d by %q, want %d by %q (%s)", tc.name, status, by, tc.status, tc.by, body)
		}
		if tc.by == "holder" && body != "Bearer member" {
			t.Errorf("%s: the client's Authorization did not reach the holder: %q", tc.name, body)
		}
	}

	down := NewRegistry(fakeReplicas{err: errors.New("the database is away")}, errNoRow, self, "127.0.0.1:1", slog.New(slog.DiscardHandler))
	front2 := httptest.NewServer(NewRouter(down, creds, local, slog.New(slog.DiscardHandler)))
	defer front2.Close()
	req, _ := http.NewRequest("POST", front2.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", NewSessionID(other))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the database cannot say where the session is: %d, want 503", resp.StatusCode)
	}
}

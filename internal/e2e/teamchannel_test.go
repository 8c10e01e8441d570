package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	callerid "github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/peer"
)

// channel is a client of a replica's internal channel: as a replica with
// the store's key signs (keyed), or as anyone else (the zero value).
type channel struct {
	keys  peer.Keys
	keyed bool
}

// channelOf is the channel of a replica with key, derived as docs/team.md
// says.
func channelOf(key []byte) channel {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(peer.KeyLabel))
	return channel{keys: peer.NewKeys([][]byte{m.Sum(nil)}), keyed: true}
}

// channelClient reaches a replica's channel over TLS without checking its
// certificate (a replica pins it by its row; this test is no replica).
var channelClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// peerRequest is a request on the channel at https://addr+path for
// replica to, with hdr (pairs), signed if c is keyed, naming member if
// not nil.
func (c channel) request(t *testing.T, method, addr, path, to, body string, member *callerid.Identity, hdr ...string) *http.Request {
	t.Helper()
	ctx := context.Background()
	if member != nil {
		ctx = callerid.With(ctx, *member)
	}
	req, _ := http.NewRequestWithContext(ctx, method, "https://"+addr+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if c.keyed {
		if err := c.keys.Sign(req, "0000000000000000", to); err != nil {
			t.Fatal(err)
		}
	}
	return req
}

// send sends req (again: its body is kept) and returns the status and body.
func send(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	if req.GetBody != nil {
		req.Body, _ = req.GetBody()
	}
	resp, err := channelClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// replicaAt is the id of the replica whose channel is at addr, by the
// database.
func replicaAt(t *testing.T, url, addr string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var id string
	if err := conn.QueryRow(t.Context(), `SELECT id FROM plexus_replicas WHERE addr = $1`, addr).Scan(&id); err != nil {
		t.Fatalf("the replica at %s: %v", addr, err)
	}
	return id
}

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/peer"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTeamStopAnswersCallsOnTheChannel: a replica that still routes calls
// to one being stopped — as a replica whose lease claims time out does,
// for seconds after the hand-over — and still holds its connection there
// (a subscriptions/listen stream) gets an answer to every call it writes
// on its kept-alive channel connection; an answer that closes the
// connection tells it to make the next one anew. It never meets a
// connection closed under a call it wrote, which it could only report as
// "outcome unknown". The connection is a raw one, its calls written
// whatever the server did meanwhile, as a call is that crosses the
// server's close (net/http's client notices a close between calls only).
// Before, the channel's shutdown closed its idle connections while the
// others still wrote calls on them: here the next call met EOF at almost
// every stop, and TestTeamSpread saw one call in three stops with an
// unknown outcome under -race.
func TestTeamStopAnswersCallsOnTheChannel(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, key := writeKeyFile(t)
	rs := peerReplicas(t, 2, pg.URL, keyFile)
	rs[0].MustRun("add", "s0", "--", rs[0].Bin, "example-server")
	db, err := pgx.Connect(t.Context(), pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var owner string
	var token int64
	within(t, 30*time.Second, "s0's lease held by the replica it was added through", func() bool {
		return db.QueryRow(t.Context(), `SELECT l.owner, l.token FROM plexus_leases l JOIN plexus_replicas r ON r.id = l.owner WHERE l.server = 's0' AND r.addr = $1`, rs[0].peer).
			Scan(&owner, &token) == nil
	})
	ch := channelOf(key)
	url := "https://" + rs[0].peer + peer.ServerPath + "s0"
	request := func(ctx context.Context, method, body string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+body+`,`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			req.Header.Set("Mcp-Name", "echo")
		}
		req.Header.Set(peer.TokenHeader, strconv.FormatInt(token, 10))
		if err := ch.keys.Sign(req, "0000000000000000", owner); err != nil {
			t.Fatal(err)
		}
		return req
	}

	// The other replica's connection: its listen stream, on a connection
	// of its own.
	listening, endListen := context.WithCancel(t.Context())
	defer endListen()
	lc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	listen, err := lc.Do(request(listening, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Body.Close()
	if listen.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(listen.Body)
		t.Fatalf("subscriptions/listen on the channel: %d %s", listen.StatusCode, b)
	}
	go io.Copy(io.Discard, listen.Body)

	// Its calls: one kept-alive connection.
	var conn net.Conn
	var br *bufio.Reader
	dial := func() error {
		c, err := tls.Dial("tcp", rs[0].peer, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		conn, br = c, bufio.NewReader(c)
		return nil
	}
	call := func() (*http.Response, string, error) {
		req := request(context.Background(), "tools/call", `"name":"echo","arguments":{"text":"moving"}`)
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		if err := req.Write(conn); err != nil {
			return nil, "", err
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	if err := dial(); err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close() }()
	var before string
	defer func() {
		if t.Failed() {
			t.Logf("the last call before the stop: %s", before)
		}
	}()
	within(t, 30*time.Second, "a call served on the channel before the stop", func() bool {
		resp, out, err := call()
		if err == nil && resp.StatusCode == http.StatusOK && strings.Contains(out, "moving") && !resp.Close {
			return true
		}
		before = fmt.Sprintf("%v %.300s", err, out)
		if err != nil || resp.Close {
			conn.Close()
			if err := dial(); err != nil {
				t.Fatal(err)
			}
		}
		return false
	})

	stopped := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		rs[0].StopDaemon()
		stopped <- time.Since(start)
	}()
	// Calls at a pace, as a replica's load makes them; the connection is
	// idle between them.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	answered := map[int]int{}
	told := ""
	for told == "" {
		<-tick.C
		resp, out, err := call()
		var op *net.OpError
		switch {
		case err == nil:
			answered[resp.StatusCode]++
			if why := resp.Header.Get(peer.RefusedHeader); why != "" {
				told = "refused (not made): " + why
			} else if resp.StatusCode != http.StatusOK || !strings.Contains(out, "moving") {
				t.Fatalf("a call during the stop: %d %.300s", resp.StatusCode, out)
			}
			if resp.Close && told == "" {
				told = "answered, closing the connection"
			}
		case errors.As(err, &op) && op.Op == "dial":
			told = "not made: " + err.Error()
		default:
			t.Errorf("a call written on the channel while its replica stopped got no answer, so its outcome is unknown: %v", err)
			told = "nothing"
		}
	}
	// It follows: no more calls there; its connection ends.
	endListen()
	took := <-stopped
	t.Logf("during the stop (%s): answers by status %v; then %s", took.Round(10*time.Millisecond), answered, told)
	if t.Failed() {
		t.Logf("the stopped replica's log:\n%s", rs[0].DaemonOutput())
	}
}

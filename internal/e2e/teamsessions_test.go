package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/peer"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// replica is one daemon of a team with its internal channel: its face's
// base URL and loopback token, and the channel's address.
type replica struct {
	*testenv.Env
	base, token, peer string
}

// peerReplicas starts n daemons on one database, each with its internal
// channel on a port of its own, and all with one loopback token, so that
// a client of a balancer in front of them has one token for all.
func peerReplicas(t *testing.T, n int, url, keyFile string, daemonArgs ...func() []string) []replica {
	t.Helper()
	token := make([]byte, 32)
	rand.Read(token)
	var out []replica
	for range n {
		e := envWithFiles(t, map[string]string{"token": hex.EncodeToString(token) + "\n"})
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		e.DaemonArgs = []string{"--store", url, "--store-key-file", keyFile, "--peer-listen", addr}
		for _, more := range daemonArgs {
			e.DaemonArgs = append(e.DaemonArgs, more()...)
		}
		e.StartDaemon()
		_, base, token := faceURL(t, e)
		out = append(out, replica{Env: e, base: base, token: token, peer: addr})
	}
	t.Cleanup(func() { stopTogether(out) })
	return out
}

// stopTogether stops rs's daemons at once, as a deleted deployment's
// pods stop: none waits to hand its servers over to another, which is
// stopping too.
func stopTogether(rs []replica) {
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(r.StopDaemon)
	}
	wg.Wait()
}

// envWithFiles is a harness whose home holds files (name → content, 0600)
// before its daemon starts: replicas that share one loopback token, as a
// team's take the same JWTs, or settings of the test's own.
func envWithFiles(t *testing.T, files map[string]string) *testenv.Env {
	t.Helper()
	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(e.Home, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// balancer starts HAProxy round robin in front of rs's faces and returns
// its base URL.
func balancer(t *testing.T, rs []replica) string {
	t.Helper()
	var backends []string
	for _, r := range rs {
		backends = append(backends, strings.TrimPrefix(r.base, "http://"))
	}
	return "http://" + testenv.StartHAProxy(t, backends...).Addr
}

// request2026 is one MCP 2026-07-28 tools/call (no session) of tool with
// args (JSON) at url, with the headers that era requires.
func request2026(url, token, tool, args string) *http.Request {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	return req
}

// call2026 makes one MCP 2026-07-28 tools/call of tool at base's /mcp,
// and returns the status and the answer.
func call2026(t *testing.T, base, token, tool, args string) (int, string) {
	t.Helper()
	req := request2026(base+"/mcp", token, tool, args)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(out)
}

// callsMade is how many tool calls a replica's face made, by its
// /metrics (plexus_calls_total): of server, or of every server for "".
func callsMade(t *testing.T, base, token, server string) int {
	t.Helper()
	labels := `[^}]*`
	if server != "" {
		labels = `[^}]*server="` + regexp.QuoteMeta(server) + `"[^}]*`
	}
	sum := 0
	re := regexp.MustCompile(`(?m)^plexus_calls_total\{` + labels + `\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(scrape(t, base, token), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += int(v)
	}
	return sum
}

// TestTeamSessions: with the internal channel, a session-era client's
// session lives on the replica that opened it, and its requests are
// served wherever they land — so a load balancer needs no affinity; a
// session whose replica is gone gets the 404 that tells the client to
// start anew; MCP 2026-07-28 calls are served by the replica they reach;
// and the channel takes no caller without the replicas' credential, which
// appears in no log, status or answer.
func TestTeamSessions(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, key := writeKeyFile(t)
	rs := peerReplicas(t, 3, pg.URL, keyFile)
	a, b, c := rs[0], rs[1], rs[2]
	a.MustRun("add", "example", "--", a.Bin, "example-server")
	cur, err := client.New(a.Home).Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cur.Face = &apitype.FaceSettings{AllowExternalCall: true}
	if _, err := client.New(a.Home).SetSettings(t.Context(), *cur, cur.Revision); err != nil {
		t.Fatal(err)
	}
	exampleReady(t, rs)
	for _, r := range rs {
		within(t, 5*time.Second, "external calls on", func() bool {
			set, err := client.New(r.Home).Settings(t.Context())
			return err == nil && set.Face != nil && set.Face.AllowExternalCall
		})
	}
	echo := toolNamed(t, tools(t, a.Env), "example", "echo").Name
	hc := &http.Client{}
	call := func(id int, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, id, echo, text)
	}

	t.Run("a session opened on one replica is served through every replica", func(t *testing.T) {
		code, id, _ := initialize(t, hc, a.base, a.token)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize on A: %d, session %q", code, id)
		}
		if r, ok := peer.ReplicaOf(id); !ok {
			t.Fatalf("the session id %q names no replica", id)
		} else {
			t.Logf("session %s… of replica %s", id[:20], r)
		}
		if code, _ := sessionPOST(t, hc, b.base, b.token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized through B: %d", code)
		}
		before := callsMade(t, a.base, a.token, "example")
		var took []time.Duration
		for i := range 9 {
			via := rs[(i+1)%3] // B, C, A, B, …
			text := fmt.Sprintf("hop %d", i)
			start := time.Now()
			code, body := sessionPOST(t, hc, via.base, via.token, id, call(10+i, text))
			took = append(took, time.Since(start))
			if code != http.StatusOK || !strings.Contains(body, text) {
				t.Fatalf("call %d through replica %d: %d %s", i, (i+1)%3, code, body)
			}
		}
		if got := callsMade(t, a.base, a.token, "example") - before; got != 9 {
			t.Fatalf("replica A, which holds the session, made %d calls, want 9 (every one, whichever replica they reached)", got)
		}
		t.Logf("calls on A's session through B, C, A, …: %v", took)

		// The standalone GET stream, through C.
		req, _ := http.NewRequest("GET", c.base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET stream through C: %s %s", resp.Status, resp.Header.Get("Content-Type"))
		}
		resp.Body.Close()

		// Ended through B: gone everywhere.
		deleteSession(hc, b.base, b.token, id)
		for _, r := range rs {
			if code, _ := sessionPOST(t, hc, r.base, r.token, id, `{"jsonrpc":"2.0","id":99,"method":"ping"}`); code != http.StatusNotFound {
				t.Fatalf("a ping on the ended session: %d, want 404", code)
			}
		}
	})

	t.Run("a session whose replica is unknown or gone is 404", func(t *testing.T) {
		made := peer.NewSessionID(peer.NewReplicaID())
		if code, _ := sessionPOST(t, hc, a.base, a.token, made, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusNotFound {
			t.Fatalf("a session of no replica: %d, want 404", code)
		}
		e := testenv.New(t)
		e.DaemonArgs = []string{"--store", pg.URL, "--store-key-file", keyFile, "--peer-listen", "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))}
		e.StartDaemon()
		d := replica{Env: e}
		_, d.base, d.token = faceURL(t, e)
		code, id, _ := initialize(t, hc, d.base, d.token)
		if code != http.StatusOK {
			t.Fatalf("initialize on D: %d", code)
		}
		if code, _ := sessionPOST(t, hc, a.base, a.token, id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusOK {
			t.Fatalf("a ping on D's session through A: %d", code)
		}
		e.KillDaemon()
		// A request sent on a connection kept from before the kill may
		// have reached the replica before it died: that one is 502 (its
		// outcome is unknown), never 404, which a client would take for a
		// request never made. Once the replica cannot be reached, 404.
		start := time.Now()
		for try := 0; ; try++ {
			code, _ := sessionPOST(t, hc, a.base, a.token, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if code == http.StatusNotFound {
				break
			}
			if code != http.StatusBadGateway || try > 0 {
				t.Fatalf("ping %d on the session of a killed replica: %d, want 404 (or 502 once)", try, code)
			}
		}
		t.Logf("a killed replica's session: 404 through another replica after %s", time.Since(start))
	})

	t.Run("2026-07-28 calls are served by the replica they reach", func(t *testing.T) {
		var before []int
		for _, r := range rs {
			before = append(before, callsMade(t, r.base, r.token, "example"))
		}
		for i := range 6 {
			if code, out := call2026(t, rs[i%3].base, a.token, echo, `{"text":"modern"}`); code != http.StatusOK || !strings.Contains(out, "modern") {
				t.Fatalf("a 2026-07-28 call on replica %d: %d %s", i%3, code, out)
			}
		}
		// Each replica made the calls it got (the one that runs the
		// stdio server also made the others', forwarded to it).
		var made []int
		for i, r := range rs {
			made = append(made, callsMade(t, r.base, r.token, "example")-before[i])
			if made[i] != 2 && made[i] != 6 {
				t.Fatalf("replica %d made %d calls, want 2 (or 6 where the server runs)", i, made[i])
			}
		}
		t.Logf("calls made by each replica: %v", made)
	})

	t.Run("the cost of reaching the server on another replica", func(t *testing.T) {
		median := func(r replica) time.Duration {
			var took []time.Duration
			for range 50 {
				start := time.Now()
				if code, out := call2026(t, r.base, r.token, echo, `{"text":"cost"}`); code != http.StatusOK || !strings.Contains(out, "cost") {
					t.Fatalf("a call: %d %s", code, out)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			return took[len(took)/2]
		}
		var runs, other time.Duration
		for _, r := range rs {
			if s := servers(t, r.Env)["example"]; s.RunsOn == "" {
				runs = median(r)
			} else {
				other = median(r)
			}
		}
		t.Logf("a 2026-07-28 echo call, median of 50: %s on the replica that runs the server, %s on one that reaches it over the internal channel (+%s)",
			runs, other, other-runs)
	})

	t.Run("through a balancer without affinity", func(t *testing.T) {
		lb := balancer(t, rs)
		var before []int
		for _, r := range rs {
			before = append(before, callsMade(t, r.base, r.token, "example"))
		}
		// A session-era client: every request may land on another
		// replica; the one that holds the session serves them all.
		code, id, _ := initialize(t, hc, lb, a.token)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize through the balancer: %d", code)
		}
		holder, _ := peer.ReplicaOf(id)
		sessionPOST(t, hc, lb, a.token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := range 12 {
			text := fmt.Sprintf("balanced %d", i)
			if code, body := sessionPOST(t, hc, lb, a.token, id, call(100+i, text)); code != http.StatusOK || !strings.Contains(body, text) {
				t.Fatalf("session call %d through the balancer: %d %s", i, code, body)
			}
		}
		deleteSession(hc, lb, a.token, id)
		// A 2026-07-28 client: its calls spread over the replicas.
		var took []time.Duration
		for i := range 30 {
			start := time.Now()
			if code, out := call2026(t, lb, a.token, echo, `{"text":"spread"}`); code != http.StatusOK || !strings.Contains(out, "spread") {
				t.Fatalf("2026-07-28 call %d through the balancer: %d %s", i, code, out)
			}
			took = append(took, time.Since(start))
		}
		var made []int
		for i, r := range rs {
			made = append(made, callsMade(t, r.base, r.token, "example")-before[i])
			if made[i] < 10 {
				t.Errorf("replica %d made %d calls of the 42 through the balancer: they did not spread", i, made[i])
			}
		}
		slices.Sort(took)
		t.Logf("through the balancer: the session held by %s, calls made by each replica %v (the session's 12 by its holder, each 2026-07-28 call by the replica it reached and, forwarded, by the one that runs the server); 2026-07-28 call median %s", holder, made, took[len(took)/2])
	})

	t.Run("the internal channel takes only requests a replica signed for it, once", func(t *testing.T) {
		ch := channelOf(key)
		to := replicaAt(t, pg.URL, a.peer)
		const canary = "canary-7f3e9a-not-the-credential"
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"n","version":"1"}}}`
		fixed := hmac.New(sha256.New, key)
		fixed.Write([]byte("plexus internal channel v1"))
		unsigned := func(hdr ...string) *http.Request {
			return channel{}.request(t, "POST", a.peer, "/mcp", to, init, nil, hdr...)
		}
		signed := ch.request(t, "POST", a.peer, "/mcp", to, init, nil)
		for _, tc := range []struct {
			name string
			req  *http.Request
			want int
		}{
			{"nothing", unsigned(), http.StatusUnauthorized},
			{"the loopback token", unsigned("Authorization", "Bearer "+a.token), http.StatusUnauthorized},
			{"a canary credential", unsigned(peer.Header, canary), http.StatusUnauthorized},
			{"the canary as a bearer", unsigned("Authorization", "Bearer "+canary), http.StatusUnauthorized},
			{"the store's key itself", unsigned(peer.Header, base64.StdEncoding.EncodeToString(key)), http.StatusUnauthorized},
			{"the fixed credential of before", unsigned("Plexus-Peer-Credential", base64.RawURLEncoding.EncodeToString(fixed.Sum(nil))), http.StatusUnauthorized},
			{"a request signed for this replica", signed, http.StatusOK},
			{"the same request again", signed, http.StatusUnauthorized},
			{"a request signed for another replica", ch.request(t, "POST", a.peer, "/mcp", peer.NewReplicaID(), init, nil), http.StatusMisdirectedRequest},
			{"a signed request elsewhere than the face", ch.request(t, "POST", a.peer, "/v1/status", to, init, nil), http.StatusNotFound},
		} {
			if got, _ := send(t, tc.req); got != tc.want {
				t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
			}
		}
		for _, r := range rs {
			st, err := client.New(r.Home).Status(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			logs, _ := os.ReadFile(filepath.Join(r.Home, "logs.jsonl"))
			for what, text := range map[string]string{"log": string(logs), "output": r.DaemonOutput(), "status": fmt.Sprint(st),
				"tools": fmt.Sprint(tools(t, r.Env))} {
				for _, secret := range []string{signed.Header.Get(peer.Header), canary} {
					if strings.Contains(text, secret) {
						t.Errorf("a credential in %s's %s", r.Home, what)
					}
				}
			}
		}
		logs, _ := os.ReadFile(filepath.Join(a.Home, "logs.jsonl"))
		if !strings.Contains(string(logs), "internal channel: a request refused") || !strings.Contains(string(logs), "replayed") {
			t.Error("the refusals are not in the log")
		}
	})

	t.Run("rows the store's key did not seal are not trusted", func(t *testing.T) {
		// The forger writes the database, and listens where it points the
		// replicas: nothing may reach it, neither a call nor a session.
		forger, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer forger.Close()
		var reached atomic.Int64
		go func() {
			for {
				c, err := forger.Accept()
				if err != nil {
					return
				}
				reached.Add(1)
				c.Close()
			}
		}()
		conn, err := pgx.Connect(t.Context(), pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		evil := peer.NewReplicaID()
		_, ownerID, _ := owner(t, pg.URL, "example", rs)
		for _, sql := range []string{
			`INSERT INTO plexus_replicas (id, addr, fp, sig) VALUES ('` + evil + `', '` + forger.Addr().String() + `', 'ee', '\x00')`,
			`UPDATE plexus_replicas SET addr = '` + forger.Addr().String() + `' WHERE id = '` + ownerID + `'`,
			`UPDATE plexus_leases SET owner = '` + evil + `' WHERE server = 'example'`,
		} {
			if _, err := conn.Exec(t.Context(), sql); err != nil {
				t.Fatal(err)
			}
		}
		// A session of the forger's replica, through every replica: 404,
		// never passed to it with the client's token.
		for _, r := range rs {
			if code, _ := sessionPOST(t, hc, r.base, r.token, peer.NewSessionID(evil), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusNotFound {
				t.Errorf("a session of the forged replica through %s: %d, want 404", r.base, code)
			}
		}
		// Calls through every replica go on reaching the server (the
		// lease taken back, the owner's row sealed again at its next beat).
		deadline := time.Now().Add(6 * time.Second)
		for time.Now().Before(deadline) {
			for _, r := range rs {
				call2026(t, r.base, r.token, echo, `{"text":"forged"}`)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, r := range rs {
			within(t, 5*time.Second, "calls through every replica", func() bool {
				code, out := call2026(t, r.base, r.token, echo, `{"text":"forged"}`)
				return code == http.StatusOK && strings.Contains(out, "forged") && !strings.Contains(out, `"isError":true`)
			})
		}
		if n := reached.Load(); n > 0 {
			t.Fatalf("the forger's address was dialled %d times", n)
		}
		if o, id, _ := owner(t, pg.URL, "example", rs); o < 0 || id == evil {
			t.Fatalf("the lease after the forgery: replica %d (%s)", o, id)
		}
	})
}

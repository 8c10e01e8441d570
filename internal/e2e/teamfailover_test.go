package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// exampleReady waits until every replica has the example server ready,
// and says how each stands if not.
func exampleReady(t *testing.T, rs []replica) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var not []string
		for i, r := range rs {
			if s := servers(t, r.Env)["example"]; s.State != "ready" {
				not = append(not, fmt.Sprintf("replica %d: %q runsOn %q: %s", i, s.State, s.RunsOn, s.LastError))
			}
		}
		if len(not) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the example server not ready within 15 s:\n%s", strings.Join(not, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// owner is the replica that holds server's lease, by the database: its
// index in rs, its id and the lease's token.
func owner(t *testing.T, url, server string, rs []replica) (int, string, int64) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var addr, id string
	var token int64
	err = conn.QueryRow(t.Context(), `SELECT r.addr, l.owner, l.token FROM plexus_leases l JOIN plexus_replicas r ON r.id = l.owner
		WHERE l.server = $1 AND l.expires > clock_timestamp()`, server).Scan(&addr, &id, &token)
	if err != nil {
		return -1, "", 0
	}
	for i, r := range rs {
		if r.peer == addr {
			return i, id, token
		}
	}
	return -1, "", 0
}

// TestTeamFailover: a stdio server runs on one replica, which the others
// reach over the internal channel; when that replica is killed (SIGKILL),
// another takes the server within 10 s and it is callable through every
// live replica again; a call in flight there reports an unknown outcome
// and is not made again; a settings change acknowledged before the kill
// is kept.
func TestTeamFailover(t *testing.T) {
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	rs := peerReplicas(t, 3, pg.URL, keyFile)
	rs[0].MustRun("add", "example", "--", rs[0].Bin, "example-server")
	exampleReady(t, rs)
	cur, err := client.New(rs[0].Home).Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cur.Face = &apitype.FaceSettings{AllowExternalCall: true}
	if _, err := client.New(rs[0].Home).SetSettings(t.Context(), *cur, cur.Revision); err != nil {
		t.Fatal(err)
	}
	lb := balancer(t, rs)
	echo := toolNamed(t, tools(t, rs[0].Env), "example", "echo").Name
	sleep := toolNamed(t, tools(t, rs[0].Env), "example", "sleep").Name
	callOK := func(r replica) bool {
		res := r.Run("", "call", echo, `{"text":"alive"}`)
		return res.Code == 0 && strings.TrimSpace(res.Stdout) == "alive"
	}
	for i, r := range rs {
		if !callOK(r) {
			t.Fatalf("a call through replica %d before the kill failed", i)
		}
	}
	own, ownID, token := owner(t, pg.URL, "example", rs)
	if own < 0 {
		t.Fatal("no replica holds the example server's lease")
	}
	others := []replica{rs[(own+1)%3], rs[(own+2)%3]}
	t.Logf("replica %d runs the example server (token %d)", own, token)
	// Each replica says truthfully where the server runs.
	if s := servers(t, rs[own].Env)["example"]; s.RunsOn != "" || s.PID == 0 {
		t.Fatalf("on the owner: runsOn %q, pid %d", s.RunsOn, s.PID)
	}
	for _, r := range others {
		if s := servers(t, r.Env)["example"]; s.RunsOn != ownID || s.PID != 0 {
			t.Fatalf("on another replica: runsOn %q, pid %d; want %q and no process", s.RunsOn, s.PID, ownID)
		}
		if out := r.MustRun("ls"); !strings.Contains(out, "ready on replica "+ownID) {
			t.Fatalf("plexus ls on another replica:\n%s", out)
		}
	}

	// Acknowledged through the replica about to die.
	if _, err := client.New(rs[own].Home).SetSettings(t.Context(), apitype.Settings{RetryMs: 4321, Face: cur.Face}, 0); err != nil {
		t.Fatal(err)
	}
	balancedOK := func() bool {
		code, out := call2026(t, lb, rs[0].token, echo, `{"text":"balanced"}`)
		return code == http.StatusOK && strings.Contains(out, "balanced") && !strings.Contains(out, `"isError":true`)
	}
	for range 3 {
		if !balancedOK() {
			t.Fatal("a call through the balancer before the kill failed")
		}
	}

	// A call in flight on the owner, through another replica: the kill
	// waits until the owner's server has it (its stderr says so), not a
	// fixed time a loaded machine may not have sent it in.
	sleeps := func() int { return strings.Count(rs[own].MustRun("logs", "example"), "sleep started") }
	before := sleeps()
	inflight := make(chan testenv.Result, 1)
	go func() { inflight <- others[0].Run("", "call", sleep, `{"ms":4000}`) }()
	within(t, 10*time.Second, "the call in flight at the owner's server", func() bool { return sleeps() > before })

	killed := time.Now()
	rs[own].KillDaemon()

	res := <-inflight
	answered := time.Since(killed)
	if res.Code == 0 || !strings.Contains(res.Stdout+res.Stderr, "outcome is unknown") {
		t.Fatalf("the call in flight on the killed owner: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if answered > 3*time.Second {
		t.Fatalf("the call in flight answered %s after the kill: it was made again, or waited", answered)
	}
	t.Logf("the call in flight reported an unknown outcome %s after the kill", answered.Round(time.Millisecond))

	var back []time.Duration
	for i, r := range others {
		within(t, 10*time.Second-time.Since(killed), "the server callable again", func() bool { return callOK(r) })
		back = append(back, time.Since(killed))
		t.Logf("failover: the server callable through surviving replica %d %s after the SIGKILL", i, back[i].Round(time.Millisecond))
	}
	// Through the balancer, every call succeeds again (the dead backend
	// checked out, the server running elsewhere).
	within(t, 10*time.Second-time.Since(killed), "callable through the balancer", func() bool {
		for range 3 {
			if !balancedOK() {
				return false
			}
		}
		return true
	})
	t.Logf("failover: three calls in a row through the balancer succeed %s after the SIGKILL", time.Since(killed).Round(time.Millisecond))
	now, _, token2 := owner(t, pg.URL, "example", rs)
	if now == own || now < 0 || token2 <= token {
		t.Fatalf("after the kill the lease is replica %d's with token %d (before: replica %d, token %d)", now, token2, own, token)
	}
	for _, r := range others {
		if v, _ := retryMs(t, r.Env); v != 4321 {
			t.Fatalf("the settings change acknowledged before the kill: retryMs %d", v)
		}
	}

	// The new owner stops cleanly: it gives its lease up once its server
	// stopped, and the last replica takes it at its next claim.
	var last replica
	for _, r := range others {
		if r.Env != rs[now].Env {
			last = r
		}
	}
	stopped := time.Now()
	rs[now].StopDaemon()
	d := within(t, 3*time.Second, "the server callable after its owner stopped cleanly", func() bool { return callOK(last) })
	t.Logf("after a clean stop of its owner the server was callable again %s later (%s after the stop began)",
		d.Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
	if s := servers(t, last.Env)["example"]; s.RunsOn != "" || s.PID == 0 {
		t.Fatalf("the last replica does not run the server: runsOn %q, pid %d", s.RunsOn, s.PID)
	}
}

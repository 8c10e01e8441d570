package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
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
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// fixedReplicas is peerReplicas on face ports of their own that a restart
// keeps (as it keeps the channel's), so that a balancer in front of them
// keeps reaching them.
func fixedReplicas(t *testing.T, n int, url, keyFile string) []replica {
	t.Helper()
	return peerReplicas(t, n, url, keyFile, func() []string {
		return []string{"--listen", "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))}
	})
}

// spread is how many stdio servers each live replica holds, by the
// database: by the replica's channel address, sorted counts, and the
// owners' tokens summed (each change of owner adds one).
func spread(t *testing.T, url string) (map[string]int, []int, int64) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT coalesce(r.addr, ''), l.token FROM plexus_leases l LEFT JOIN plexus_replicas r ON r.id = l.owner AND NOT r.draining`)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	var moves int64
	for rows.Next() {
		var addr string
		var token int64
		if err := rows.Scan(&addr, &token); err != nil {
			t.Fatal(err)
		}
		by[addr]++
		moves += token
	}
	counts := slices.Sorted(maps.Values(by))
	return by, counts, moves
}

// TestTeamSpread: nine stdio servers added through one replica of three
// (which claims each as it adds it) end up three on each, and stay three
// on each through a rolling restart of all three replicas, each server
// moving only as the restarts need (under -short: three servers, one on
// each, and the restart of one replica, which shows a move both ways); under a load of calls of all nine
// through a balancer meanwhile, no tool is ever unknown and no call is
// reported with an unknown outcome. Before, the first replica to claim
// took every server and nothing moved them (7 of 7 on one after a
// rolling restart), and a move made the tool vanish for about 250 ms.
func TestTeamSpread(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	rs := fixedReplicas(t, 3, pg.URL, keyFile)
	perReplica := 3
	if testing.Short() {
		perReplica = 1
	}
	even := []int{perReplica, perReplica, perReplica}
	var names []string
	for i := range 3 * perReplica {
		name := fmt.Sprintf("s%d", i)
		names = append(names, name)
		rs[0].MustRun("add", name, "--", rs[0].Bin, "example-server")
	}
	cur, err := client.New(rs[0].Home).Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cur.Face = &apitype.FaceSettings{AllowExternalCall: true}
	if _, err := client.New(rs[0].Home).SetSettings(t.Context(), *cur, cur.Revision); err != nil {
		t.Fatal(err)
	}
	spreadEvenly := func(what string) {
		t.Helper()
		start := time.Now()
		within(t, 60*time.Second, fmt.Sprintf("%s: %d servers on each replica", what, perReplica), func() bool {
			// A lease no live replica holds ("": free, or its owner
			// gone or stopping) is no replica's share: counted as one,
			// it let the load end before the restarted replica took its
			// servers back.
			by, counts, _ := spread(t, pg.URL)
			_, unheld := by[""]
			return !unheld && slices.Equal(counts, even)
		})
		by, _, moves := spread(t, pg.URL)
		t.Logf("%s: %v by channel address after %s (owner changes so far: %d)", what, by, time.Since(start).Round(100*time.Millisecond), moves-int64(len(names)))
	}
	spreadEvenly("added through one replica")
	_, _, before := spread(t, pg.URL)

	var echos []string
	for _, name := range names {
		echos = append(echos, toolNamed(t, tools(t, rs[0].Env), name, "echo").Name)
	}
	lb := balancer(t, rs)
	var notYet string
	defer func() {
		if t.Failed() {
			t.Logf("the last call refused before the load: %s", notYet)
		}
	}()
	// A precondition of the load below, not its measure: each replica
	// learns the others' catalogs from the database, which under the race
	// detector on a loaded machine took over 10 s once.
	within(t, 30*time.Second, "every server callable through the balancer", func() bool {
		for _, echo := range echos {
			if code, out := call2026(t, lb, rs[0].token, echo, `{"text":"up"}`); code != http.StatusOK || !strings.Contains(out, "up") || strings.Contains(out, `"isError":true`) {
				notYet = fmt.Sprintf("%s: %d %.500s", echo, code, out)
				return false
			}
		}
		return true
	})

	var ok, unknownTool, unknownOutcome, other atomic.Int64
	var mu sync.Mutex
	firsts := map[string][]string{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 30 * time.Second}
	for c := range 4 {
		wg.Go(func() {
			for i := c; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				echo := echos[i%len(echos)]
				resp, err := hc.Do(request2026(lb+"/mcp", rs[0].token, echo, `{"text":"moving"}`))
				body := ""
				code := 0
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					body, code = string(b), resp.StatusCode
				}
				kind := "other"
				switch {
				case err == nil && code == http.StatusOK && strings.Contains(body, "moving") && !strings.Contains(body, `"isError":true`):
					ok.Add(1)
					continue
				case strings.Contains(body, "outcome is unknown"):
					unknownOutcome.Add(1)
					kind = "unknown outcome"
				case strings.Contains(body, "no tool named") || strings.Contains(body, "nknown tool"):
					unknownTool.Add(1)
					kind = "unknown tool"
				default:
					other.Add(1)
				}
				mu.Lock()
				if len(firsts[kind]) < 3 {
					firsts[kind] = append(firsts[kind], fmt.Sprintf("%s %s: %d %v %.600s", time.Now().Format("15:04:05.000"), echo, code, err, body))
				}
				mu.Unlock()
			}
		})
	}
	restarts := rs
	if testing.Short() {
		restarts = rs[:1] // one restart shows a move both ways
	}
	for i := range restarts {
		start := time.Now()
		t.Logf("%s: stopping replica %d", start.Format("15:04:05.000"), i)
		rs[i].StopDaemon()
		stopped := time.Since(start)
		rs[i].StartDaemon()
		spreadEvenly(fmt.Sprintf("replica %d restarted (its stop took %s)", i, stopped.Round(10*time.Millisecond)))
	}
	close(stop)
	wg.Wait()
	_, _, after := spread(t, pg.URL)
	defer stopTogether(rs)
	t.Logf("through %d restarts: %d calls served, %d of an unknown tool, %d with an unknown outcome, %d failed otherwise; %d owner changes (a restart of a replica holding %d: %d, to the others and back)",
		len(restarts), ok.Load(), unknownTool.Load(), unknownOutcome.Load(), other.Load(), after-before, perReplica, 2*perReplica)
	if unknownTool.Load() > 0 || unknownOutcome.Load() > 0 || ok.Load() == 0 {
		t.Errorf("calls of an unknown tool or an unknown outcome during the moves:\n%s\n%s", strings.Join(firsts["unknown tool"], "\n"), strings.Join(firsts["unknown outcome"], "\n"))
	}
	if other.Load() > 0 {
		t.Logf("the other failures:\n%s", strings.Join(firsts["other"], "\n"))
	}
	// Each restart moves its replica's servers to the others as it
	// stops, and as many to the replica started in its place (it has a
	// new id): 6 for three. One more a restart is allowed: a server given
	// up that the replica meant for it did not take within freeGrace is
	// taken by another, and moved once more.
	if moves, most := after-before, int64((2*perReplica+1)*len(restarts)); moves > most {
		t.Errorf("%d owner changes for %d restarts, over %d: servers moved more than needed", moves, len(restarts), most)
	}
}

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTeamApprovalsThroughEveryReplica: servers added through two
// replicas at the same moment — each add a person's approval, saved in
// the pins the replicas share — all run on both replicas, and none is
// held for approval anywhere. A stdio server whose catalog is known may
// wait "idle" (on demand) once approved: its tools are listed and its
// first call starts it, so it is not held.
func TestTeamApprovalsThroughEveryReplica(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("PostgreSQL, two daemons, eight servers; pins TestConcurrentApprovalsAreAllKept and host TestApprovalTakenInByAMergedSave run under -short")
	}
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	rs := replicas(t, 2, pg.URL, keyFile)
	var wg sync.WaitGroup
	const each = 4
	for i, r := range rs {
		for j := range each {
			wg.Go(func() {
				// Settings saves are strict across replicas: an add
				// overtaken by another is refused, and made again.
				name := fmt.Sprintf("s%d%d", i, j)
				for try := 0; ; try++ {
					res := r.Run("", "add", name, "--no-verify", "--", r.Bin, "example-server")
					if res.Code == 0 {
						return
					}
					if !strings.Contains(res.Stderr+res.Stdout, "changed meanwhile") || try == 20 {
						t.Errorf("add %s: %s%s", name, res.Stdout, res.Stderr)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var not []string
		for i, r := range rs {
			for name, s := range servers(t, r) {
				if (s.State != "ready" && s.State != "idle") || s.NeedsApproval {
					not = append(not, fmt.Sprintf("replica %d: %s %s %q", i, name, s.State, s.LastError))
				}
			}
			if n := len(servers(t, r)); n != 2*each {
				not = append(not, fmt.Sprintf("replica %d has %d servers", i, n))
			}
		}
		if len(not) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every server ready on every replica:\n%s", strings.Join(not, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package e2e

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTeamStopOutlastingTheGrace: a replica whose clean stop waited out
// the API's grace period (a request on its face still reading its body)
// still removes its row from the database. Before, removing the row
// (and giving up the leases left) ran on the context the HTTP servers'
// shutdown had used up, and failed at once — "could not remove the
// replica's row: context deadline exceeded" — at every stop of
// TestTeamSpread under -race on a loaded machine, whose channels took
// 4–5 s to shut down.
func TestTeamStopOutlastingTheGrace(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	rs := peerReplicas(t, 2, pg.URL, keyFile)
	id := replicaAt(t, pg.URL, rs[0].peer)

	// A request that has begun and will not end within the grace: its
	// headers sent, the face's handler reading its body (the server says
	// "100 Continue" once it does), which never comes.
	conn, err := net.Dial("tcp", strings.TrimPrefix(rs[0].base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := request2026(rs[0].base+"/mcp", rs[0].token, "x", `{}`)
	req.Header.Set("Expect", "100-continue")
	var head strings.Builder
	head.WriteString("POST /mcp HTTP/1.1\r\nHost: " + req.URL.Host + "\r\nContent-Length: 1024\r\n")
	for k, vs := range req.Header {
		for _, v := range vs {
			head.WriteString(k + ": " + v + "\r\n")
		}
	}
	head.WriteString("\r\n")
	if _, err := conn.Write([]byte(head.String())); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("the face did not begin reading the request's body: %q %v", line, err)
	}

	start := time.Now()
	rs[0].StopDaemon()
	t.Logf("the stop took %s", time.Since(start).Round(10*time.Millisecond))
	db, err := pgx.Connect(t.Context(), pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var rows int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM plexus_replicas WHERE id = $1`, id).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("the stopped replica's row is still in the database; its log:\n%s", rs[0].DaemonOutput())
	}
}

package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestTeamReplicasShareOneLogin: two daemons on one PostgreSQL store share
// a server's login and refresh it in turns — both refresh it in the
// background at the same moment, and calls go through both meanwhile —
// and the authorization server, which rotates refresh tokens and revokes
// everything on a replayed one (as oidc-provider does), never sees a
// refresh token twice: the login lasts. With oauth.json one document that
// the last writer won, and no claim, both replicas spent the same refresh
// token and the login was lost.
func TestTeamReplicasShareOneLogin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs PostgreSQL and two daemons for several token lifetimes")
	}
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	// 4 s tokens: each is refreshed 2 s into its life.
	as := authserver.Start(t, authserver.Options{AccessTTL: 4 * time.Second, RevokeOnReuse: true})
	rs := replicas(t, 2, pg.URL, keyFile)
	a, b := rs[0], rs[1]
	script, record := browser(t)
	a.ExtraEnv = append(a.ExtraEnv, "BROWSER="+script)
	a.MustRun("add", "srv", as.MCPURL)
	done := approveInBrowser(t, record)
	if r := a.Run("", "login", "srv"); r.Code != 0 {
		t.Fatalf("login through a: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// b takes the login a made, and starts the server with it: the
	// approval a gave when the server was added reaches b too.
	deadline := time.Now().Add(20 * time.Second)
	for st := servers(t, b)["srv"]; st.State != "ready"; st = servers(t, b)["srv"] {
		if time.Now().After(deadline) {
			t.Fatalf("b: %s %q needs approval %v %+v", st.State, st.LastError, st.NeedsApproval, st.Auth)
		}
		time.Sleep(100 * time.Millisecond)
	}
	echo := toolNamed(t, tools(t, a, "--server", "srv"), "srv", "echo").Name

	start := as.Refreshes.Load()
	stop := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for _, e := range rs {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if r := e.Run("", "call", echo, `{"text":"shared"}`); r.Code != 0 || !strings.Contains(r.Stdout, "shared") {
					errs <- r.Stdout + r.Stderr
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a call while the replicas refreshed: %s", e)
	}
	refreshes := as.Refreshes.Load() - start
	t.Logf("refreshes in 10 s of 4 s tokens on two replicas: %d, replays %d", refreshes, as.Replays.Load())
	if as.Replays.Load() != 0 || refreshes < 3 {
		t.Errorf("%d refreshes, %d refresh tokens spent twice; want several refreshes and no replay", refreshes, as.Replays.Load())
	}
	for _, e := range rs {
		if st := servers(t, e)["srv"]; st.State != "ready" || st.Auth == nil || !st.Auth.LoggedIn || st.Auth.NeedsLogin {
			t.Errorf("%s: %s %+v", e.Home, st.State, st.Auth)
		}
	}
}

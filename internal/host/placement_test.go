package host

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// elsewhere is a team's Placement for a test: every stdio server runs on
// another replica, at url.
type elsewhere struct{ url string }

func (e elsewhere) Place(string) (*Remote, error) {
	return &Remote{Replica: "r2", URL: e.url}, nil
}

// startingReplica is another replica's face for one server: it refuses
// (503, as a replica still starting the process does) until running is
// set, then serves a server with an echo tool.
func startingReplica(t *testing.T) (url string, running *atomic.Bool) {
	s := mcp.NewServer(&mcp.Implementation{Name: "elsewhere", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	serve := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	running = &atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !running.Load() {
			http.Error(w, "this replica is starting that server", http.StatusServiceUnavailable)
			return
		}
		serve.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, running
}

// TestReloadRetriesAServerItsReplicaIsStarting: a server whose settings
// another replica changed (this one applies them from the shared
// settings: a reload) runs on a replica that is starting its process
// again, which refuses the connection. The connection is tried again until
// that replica runs it, and meanwhile the server is Arriving (a call of
// its tools waits). Before, the reload left it out for the probes, which
// try on a client's activity 30 s later: its tools were "unknown" on that
// replica all that while (TestTeamSpread, a server added while its owner
// started it: 16 s and more, every call the balancer sent there).
func TestReloadRetriesAServerItsReplicaIsStarting(t *testing.T) {
	url, running := startingReplica(t)
	th := newTestHost(t)
	th.SetPlacement(elsewhere{url: url})
	running.Store(true)
	th.create("ex", th.example(nil))
	running.Store(false)
	cfg := th.st.Config()
	ex := cfg.MCP.Servers["ex"]
	ex.CallTimeoutMs = 12345
	cfg.MCP.Servers["ex"] = ex
	th.writeConfigFile(cfg)
	if _, err := th.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := th.status("ex"); st.State != apitype.StateFailed || st.RunsOn != "r2" {
		t.Fatalf("ex while its replica starts it: %s on %q (%s); want failed on r2", st.State, st.RunsOn, st.LastError)
	}
	if _, ok := th.Arriving("ex"); !ok {
		t.Errorf("ex is not arriving while its replica starts it (%s): a call of its tools would be unknown", th.status("ex").LastError)
	}
	running.Store(true)
	waitFor(t, "ex connected once its replica runs it", func() bool { return th.status("ex").State == apitype.StateReady })
}

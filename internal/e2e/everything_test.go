package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestEverything adds @modelcontextprotocol/server-everything from the npm
// registry over stdio and over streamable HTTP, and uses its tools,
// resources and prompts through the daemon.
func TestEverything(t *testing.T) {
	t.Parallel()
	bin := testenv.NPMBin(t, "mcp-server-everything")
	base := testenv.StartNodeHTTPServer(t, bin, "streamableHttp")

	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "everything", "--", bin)
	e.MustRun("add", "everything-http", base+"/mcp")

	for _, name := range []string{"everything", "everything-http"} {
		t.Run(name, func(t *testing.T) {
			st := waitState(t, e, name, "ready", 30*time.Second)
			if st.Tools < 5 {
				t.Fatalf("%s offers %d tools", name, st.Tools)
			}
			list := tools(t, e, "--server", name)
			echo := toolNamed(t, list, name, "echo")
			out := e.MustRun("call", echo.Name, `{"message":"through plexus"}`)
			mustContain(t, "echo", out, "through plexus")

			sum := toolNamed(t, list, name, "get-sum")
			out = e.MustRun("call", sum.Name, `{"a":2,"b":40}`)
			mustContain(t, "get-sum", out, "42")

			out = e.MustRun("resources", "--server", name, "--json")
			mustContain(t, "resources", out, "demo://resource/static/document/")
			out = e.MustRun("resources", "read", name, "demo://resource/static/document/architecture.md")
			if strings.TrimSpace(out) == "" {
				t.Fatal("resources read printed nothing")
			}
			out = e.MustRun("prompts", "--server", name, "--json")
			mustContain(t, "prompts", out, "simple-prompt")
			out = e.MustRun("prompts", "get", name, "simple-prompt")
			if strings.TrimSpace(out) == "" {
				t.Fatal("prompts get printed nothing")
			}
		})
	}
	st := servers(t, e)["everything"]
	e.MustRun("rm", "everything")
	groupGone(t, st.PID, 10*time.Second)
}

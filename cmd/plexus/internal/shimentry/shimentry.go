// Package shimentry runs the lifeline shim (lifeline.Main) from package
// initialisation, when the process was started as one: `plexus
// __plexus-shim -- CMD ARGS…` runs in front of every stdio server, and
// its start is on the path of a server's first call. Go initialises a
// package once its imports are, in the order of their import paths
// otherwise; this package imports only the standard library's small
// packages, lifeline and execpages, so it runs before most of the binary —
// the settings API, the metrics, tracing, the registry client, the TUI —
// is initialised at all, and the shim never pays for it (half the CPU of
// a start; TestShimSkipsTheRestOfTheBinary). cmd/plexus imports it for
// that alone.
package shimentry

import (
	"os"
	"time"

	"github.com/plexus-mcp/plexus/internal/execpages"
	"github.com/plexus-mcp/plexus/internal/lifeline"
)

// Command is the hidden subcommand that runs the shim.
const Command = "__plexus-shim"

// shedAfter is how long after its start the shim gives back the pages
// starting it mapped (execpages.Shed): by then its server runs, and
// the shim only waits, for the server's exit or a signal.
const shedAfter = 2 * time.Second

func init() {
	if len(os.Args) < 2 || os.Args[1] != Command {
		return
	}
	time.AfterFunc(shedAfter, execpages.Shed)
	os.Exit(lifeline.Main(os.Args[2:]))
}

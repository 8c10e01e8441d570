package e2e

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// waitingTests is how many tests of this package run at once under the
// race detector unless -parallel says otherwise: they mostly wait on the
// processes they drive (a daemon's start, a session's expiry, a server's
// backoff), so more of them at a time than there are CPUs (-parallel's
// default) shortens the run. Not in a plain run: it holds the conformance
// suites, whose timing checks (a reconnect within 500 ms) a loaded
// machine fails, and its length is theirs anyway. The tests with a tight
// time bound are not parallel and run alone first.
const waitingTests = 6

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit && testenv.Race() && runtime.GOMAXPROCS(0) < waitingTests {
		flag.Set("test.parallel", strconv.Itoa(waitingTests))
	}
	os.Exit(m.Run())
}

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// mcpGoConformanceServer builds mcp-go's own conformance server (its
// module ships one: examples/conformance, what mcp-go's CI runs the suite
// against) and runs it over streamable HTTP on 127.0.0.1, returning its
// endpoint.
func mcpGoConformanceServer(t *testing.T) string {
	t.Helper()
	bin := testenv.BuildCommand(t, "github.com/mark3labs/mcp-go/examples/conformance")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CONFORMANCE_ADDR="+addr)
	return startListening(t, cmd, addr) + "/mcp"
}

// startListening starts cmd and returns http://addr once something
// listens there; the process is killed when the test ends.
func startListening(t *testing.T, cmd *exec.Cmd, addr string) string {
	t.Helper()
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(end) {
			t.Fatalf("%s did not listen on %s:\n%s", cmd.Path, addr, out.String())
		}
	}
}

// TestConformanceSuitesMCPGo runs the conformance suites 0.1.16
// (every server scenario), 0.2.0-alpha.11 and 0.2.0-alpha.12 (the
// 2026-07-28 scenarios) against mcp-go's own conformance server, directly
// and through a bare profile with the upstream era negotiated and pinned
// to the session era; and alpha.12 against the go-sdk's conformance
// fixture (0.1.16 and alpha.11 in front of it are TestConformanceThroughFace's).
// Every scenario that passes directly must pass through Plexus, the first
// time; the verdicts and the counts per server and suite are printed.
//
// That is nine runs of a suite, minutes of CI: the test command runs
// alpha.12 in front of mcp-go with the upstream pinned to the session era
// (the pair that lost most before: caching, prompts, resources,
// templates, progress), and 0.1.16's four scenarios of questions mid-call
// with the upstream era negotiated, directly and through Plexus;
// PLEXUS_FULL_MATRIX=1 runs them all (docs/contributing.md).
func TestConformanceSuitesMCPGo(t *testing.T) {
	t.Parallel()
	needConformance(t)
	full := os.Getenv("PLEXUS_FULL_MATRIX") == "1"
	mcpgo := mcpGoConformanceServer(t)
	servers := `"mcpgo": {"type": "http", "url": ` + jsonString(mcpgo) + `}, ` +
		`"mcpgo-pinned": {"type": "http", "url": ` + jsonString(mcpgo) + `, "protocolVersion": "2025-11-25"}`
	profiles := `"mcpgo": {"servers": ["mcpgo"], "naming": "bare"}, "mcpgo-pinned": {"servers": ["mcpgo-pinned"], "naming": "bare"}`
	names := []string{"mcpgo", "mcpgo-pinned"}
	var gosdk string
	if full {
		gosdk = startHTTPFixture(t, everythingServer(t), true)
		servers += `, "gosdk": {"type": "http", "url": ` + jsonString(gosdk) + `}`
		profiles += `, "gosdk": {"servers": ["gosdk"], "naming": "bare"}`
		names = append(names, "gosdk")
	}

	e := testenv.New(t)
	cfg := `{"mcp": {"face": {"allowExternalCall": true}, "servers": {` + servers + `}, "profiles": {` + profiles + `}}}`
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	for _, name := range names {
		waitState(t, e, name, "ready", 30*time.Second)
	}
	_, base, token := faceURL(t, e)
	face := tokenProxy(t, base, token)

	type target struct {
		name, direct string
		profiles     []string // the same server through Plexus, one run each
	}
	suites := []struct {
		version, spec string
		targets       []target
		scenarios     []string // all when none
	}{
		{"0.1.16", "", []target{{"mcp-go", mcpgo, []string{"mcpgo", "mcpgo-pinned"}}}, nil},
		{"0.2.0-alpha.11", "2026-07-28", []target{{"mcp-go", mcpgo, []string{"mcpgo", "mcpgo-pinned"}}}, nil},
		{"0.2.0-alpha.12", "2026-07-28", []target{
			{"mcp-go", mcpgo, []string{"mcpgo", "mcpgo-pinned"}},
			{"go-sdk", gosdk, []string{"gosdk"}},
		}, nil},
	}
	if !full {
		// And 0.1.16's scenarios of a server's questions mid-call in front
		// of mcp-go negotiated, which refuses them in the era Plexus speaks
		// to it: a session-era client gets a session of its own there.
		suites[0].targets = []target{{"mcp-go", mcpgo, []string{"mcpgo"}}}
		suites[0].scenarios = []string{"tools-call-elicitation", "tools-call-sampling", "elicitation-sep1034-defaults", "elicitation-sep1330-enums"}
		suites = append(suites[:1], suites[2])
		suites[1].targets = []target{{"mcp-go", mcpgo, []string{"mcpgo-pinned"}}}
	}
	// Every run at once, four at most: a run is a minute of mostly
	// waiting on one node process, and the runs share nothing but the
	// daemon.
	type run struct {
		suite, target int
		profile       string // "" directly
		res           suiteRun
		took          time.Duration
	}
	var runs []*run
	for si, suite := range suites {
		for ti, tg := range suite.targets {
			runs = append(runs, &run{suite: si, target: ti})
			for _, p := range tg.profiles {
				runs = append(runs, &run{suite: si, target: ti, profile: p})
			}
		}
	}
	busy := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() {
			busy <- struct{}{}
			defer func() { <-busy }()
			suite, tg := suites[r.suite], suites[r.suite].targets[r.target]
			url := tg.direct
			if r.profile != "" {
				url = face + "/mcp/" + r.profile
			}
			start := time.Now()
			r.res = runSuiteIn(t, suite.version, suite.spec, url, suite.scenarios...)
			r.took = time.Since(start)
		})
	}
	wg.Wait()
	for si, suite := range suites {
		label := suite.version
		if suite.spec != "" {
			label += "/" + suite.spec
		}
		var results []conformanceResult
		var counts []string
		for ti, tg := range suite.targets {
			var direct *run
			for _, r := range runs {
				if r.suite == si && r.target == ti && r.profile == "" {
					direct = r
				}
			}
			for _, r := range runs {
				if r.suite != si || r.target != ti || r.profile == "" {
					continue
				}
				name := tg.name + " negotiated"
				if strings.HasSuffix(r.profile, "-pinned") {
					name = tg.name + " pinned"
				}
				c := conformanceResult{target: conformanceTarget{name: name, direct: tg.direct, profile: r.profile},
					direct: direct.res.verdicts, plexus: r.res.verdicts}
				results = append(results, c)
				dp, df := count(c.direct)
				pp, pf := count(c.plexus)
				counts = append(counts, fmt.Sprintf("%s %s: direct %d/%d (%s), through Plexus %d/%d (%s), lost %d",
					label, name, dp, dp+df, direct.took.Round(time.Second), pp, pp+pf, r.took.Round(time.Second), len(c.lost())))
				for _, lost := range c.lost() {
					if why, ok := answerless(t, direct.res, lost); ok {
						t.Logf("%s %s: %s is lost through Plexus, and cannot be won: %s", label, name, lost, why)
						continue
					}
					t.Errorf("%s %s: %s passes directly but not through Plexus", label, name, lost)
				}
			}
		}
		table := sideBySide(label, results) + strings.Join(counts, "\n") + "\n"
		t.Log("\n" + table)
		fmt.Print(table)
	}
	if t.Failed() {
		t.Logf("the daemon's log:\n%s", lastLines(e.DaemonOutput(), 200))
	}
}

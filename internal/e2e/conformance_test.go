package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The official MCP conformance suite's server scenarios, run against real
// servers directly and through Plexus's face as a transparent proxy (a bare
// profile), side by side (R-FACE-5). Every scenario that passes directly
// must pass through Plexus, the first time. The suite and a
// Node ≥ 22 come from the npm registry (tools/conformance.sh installs
// them once under ~/.cache/mcp-conformance).

// needConformance skips outside CI when npm is missing; in CI it must run.
func needConformance(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("conformance runs are not short")
	}
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "" {
		t.Skip("npm is missing (CI installs it)")
	}
}

// everythingServer builds the go-sdk's conformance fixture.
func everythingServer(t *testing.T) string {
	t.Helper()
	return testenv.BuildCommand(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
}

// startHTTPFixture runs the fixture over streamable HTTP on 127.0.0.1.
func startHTTPFixture(t *testing.T, bin string, stateless bool) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.Command(bin, "-http="+addr, fmt.Sprintf("-stateless=%v", stateless))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the fixture did not listen on %s:\n%s", addr, out.String())
		}
	}
	return "http://localhost" + addr[strings.LastIndex(addr, ":"):] + "/mcp"
}

// tokenProxy is what a registered client does: it sends the daemon's token
// with every request. Host and Origin pass unchanged, so the face's own
// DNS-rebinding defence is what the suite tests.
//
// It is a hop of bytes, not an HTTP proxy: each connection of the suite's
// gets one connection to the face; each request read from it is written on
// with the token added, and what the face answers is copied back as it
// comes. An HTTP reverse proxy (httputil.ReverseProxy) in this place lost
// answers in about one suite run in three, also with no Plexus behind it
// (the go-sdk fixture alone): an event stream cut before the call's
// result, a call that timed out. The suite's verdicts would then measure
// the proxy, not the face.
func tokenProxy(t *testing.T, base, token string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { relayWithToken(in, target.Host, token) })
		}
	}()
	return fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
}

// relayWithToken carries one client connection to addr: requests with the
// bearer token set, answers byte for byte. HTTP/1.1 answers come in the
// order of their requests, so the answers need no parsing.
func relayWithToken(in net.Conn, addr, token string) {
	defer in.Close()
	out, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer out.Close()
	go func() {
		io.Copy(in, out)
		in.Close() // the face closed: so does the client's side
	}()
	br := bufio.NewReader(in)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if err := req.Write(out); err != nil {
			return
		}
	}
}

var verdict = regexp.MustCompile(`^(PASS|FAIL) (\S+)`)

// suiteRun is one run of tools/conformance.sh: each scenario's verdict,
// and the folder of the suite's own results (checks.json per scenario).
type suiteRun struct {
	verdicts map[string]bool
	out      string
}

// runSuite runs tools/conformance.sh server URL and returns each scenario's
// verdict.
func runSuite(t *testing.T, version, spec, url string, scenarios ...string) map[string]bool {
	t.Helper()
	return runSuiteIn(t, version, spec, url, scenarios...).verdicts
}

// runSuiteIn is runSuite keeping the suite's results for a closer look.
func runSuiteIn(t *testing.T, version, spec, url string, scenarios ...string) suiteRun {
	t.Helper()
	run, err := startSuite(t, version, spec, url, scenarios...)()
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// startSuite starts a run of the suite and returns what waits for its end,
// so that runs against different servers overlap: a run mostly waits on
// node and on the server, not on a CPU. It does not fail t (its run may
// end on another goroutine): the wait says what went wrong.
func startSuite(t *testing.T, version, spec, url string, scenarios ...string) func() (suiteRun, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	run := suiteRun{verdicts: map[string]bool{}, out: t.TempDir()}
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(testenv.RepoRoot(), "tools", "conformance.sh"), "server", url}, scenarios...)...)
	cmd.Env = append(os.Environ(), "CONFORMANCE_VERSION="+version, "CONFORMANCE_SPEC_VERSION="+spec, "CONFORMANCE_OUT="+run.out)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testenv.Start(t, cmd); err != nil {
		cancel()
		return func() (suiteRun, error) { return run, err }
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); cancel() }()
	return func() (suiteRun, error) {
		err := <-done
		sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
		for sc.Scan() {
			if m := verdict.FindStringSubmatch(sc.Text()); m != nil {
				run.verdicts[m[2]] = m[1] == "PASS"
			}
		}
		if len(run.verdicts) == 0 {
			return run, fmt.Errorf("conformance.sh %s against %s gave no verdicts (%v):\n%s", version, url, err, out.Bytes())
		}
		if err != nil {
			t.Logf("suite %s against %s:\n%s", version, url, out.Bytes())
		}
		return run, nil
	}
}

// checks are the suite's checks of one scenario of a run, as its
// checks.json has them.
func (r suiteRun) checks(t *testing.T, scenario string) []suiteCheck {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.out, "server", "server-"+scenario+"-[0-9][0-9][0-9][0-9]-*", "checks.json"))
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join(r.out, "server", scenario, "*", "checks.json"))
	}
	if len(files) == 0 {
		t.Fatalf("no checks.json of %s under %s", scenario, r.out)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var cs []suiteCheck
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return cs
}

// suiteCheck is one check the suite recorded.
type suiteCheck struct {
	ID      string         `json:"id"`
	Status  string         `json:"status"`
	Details map[string]any `json:"details"`
}

func count(res map[string]bool) (pass, fail int) {
	for _, ok := range res {
		if ok {
			pass++
		} else {
			fail++
		}
	}
	return pass, fail
}

// conformanceTarget is one server the suite runs against twice: directly
// at direct, and through Plexus's face at the bare profile named profile.
type conformanceTarget struct {
	name, direct, profile string
}

// conformanceResult is one suite run of one target, both ways.
type conformanceResult struct {
	target         conformanceTarget
	direct, plexus map[string]bool
}

// lost lists the scenarios that pass directly but not through Plexus. A
// flaky proxy is a failing proxy: nothing is run again, and every loss
// fails the test unless answerless says why the direct pass proves
// nothing a proxy could match.
//
// answerless is that reason for server-sse-polling: a server that closes
// a call's stream on purpose (SEP-1699) and keeps no events sends the
// call's answer nowhere — the go-sdk's handler drops a message for a
// released stream when it has no event store. The suite passes such a
// run on warnings alone: it saw the stream end with no event id to resume
// from and no answer. Plexus, in its place, cannot resume either, and
// tells its client the call's outcome is unknown (an error result) rather
// than leave it waiting for an answer that will never come; the suite
// counts that error result as a failure. The loss is accepted only when
// the direct run's own checks show that the direct client never got the
// answer either.
func answerless(t *testing.T, direct suiteRun, scenario string) (string, bool) {
	t.Helper()
	if scenario != "server-sse-polling" {
		return "", false
	}
	var closed, answered bool
	for _, c := range direct.checks(t, scenario) {
		switch c.ID {
		case "stream-closed":
			closed = true
			if got, _ := c.Details["receivedToolResponse"].(bool); got {
				answered = true
			}
			if id, _ := c.Details["lastEventId"].(string); id != "" {
				return "", false // resumable: Plexus must resume as the direct client did
			}
		case "server-sse-disconnect-resume":
			if got, _ := c.Details["receivedToolResponse"].(bool); got {
				answered = true
			}
		}
	}
	if !closed || answered {
		return "", false
	}
	return "the server closed the call's stream with no event id to resume from and never sent the answer " +
		"(the direct client passed without one); Plexus tells its client the outcome is unknown instead of leaving it waiting", true
}

func (r conformanceResult) lost() []string {
	var lost []string
	for name, ok := range r.direct {
		if ok && !r.plexus[name] {
			lost = append(lost, name)
		}
	}
	sort.Strings(lost)
	return lost
}

// sideBySide is the table of every scenario's verdict, direct and through
// Plexus, one column pair per target, with the counts below it.
func sideBySide(suite string, results []conformanceResult) string {
	names := map[string]bool{}
	for _, r := range results {
		for n := range r.direct {
			names[n] = true
		}
		for n := range r.plexus {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "suite %s\tdirect | Plexus", suite)
	for _, r := range results {
		fmt.Fprintf(tw, "\t%s", r.target.name)
	}
	fmt.Fprintln(tw)
	mark := func(res map[string]bool, n string) string {
		ok, ran := res[n]
		switch {
		case !ran:
			return "-"
		case ok:
			return "pass"
		}
		return "FAIL"
	}
	for _, n := range sorted {
		fmt.Fprintf(tw, "%s\t", n)
		for _, r := range results {
			cell := mark(r.direct, n) + " | " + mark(r.plexus, n)
			if r.direct[n] && !r.plexus[n] {
				cell += " <- lost"
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "passed\t")
	for _, r := range results {
		dp, df := count(r.direct)
		pp, pf := count(r.plexus)
		fmt.Fprintf(tw, "\t%d/%d | %d/%d", dp, dp+df, pp, pp+pf)
	}
	fmt.Fprintln(tw)
	tw.Flush()
	return b.String()
}

// TestConformanceThroughFace runs suite 0.1.16 (every server scenario) and
// 0.2.0-alpha.11 (spec 2026-07-28) against four servers, each directly and
// through a bare profile: the go-sdk's conformance server over stdio (its
// direct run is the same binary over HTTP) and over streamable HTTP, the
// TypeScript peer (testenv/tspeer; for the 2026 suite also as a strict
// 2026-07-28 server) and @modelcontextprotocol/server-everything.
func TestConformanceThroughFace(t *testing.T) {
	t.Parallel()
	needConformance(t)
	fixture := everythingServer(t)
	stateful := startHTTPFixture(t, fixture, false)
	stateless := startHTTPFixture(t, fixture, true)
	tsPeer := testenv.StartTSPeer(t)
	tsPeer2026 := testenv.StartTSPeer2026(t)
	everything := testenv.StartNodeHTTPServer(t, testenv.NPMBin(t, "mcp-server-everything"), "streamableHttp") + "/mcp"

	// Servers whose name ends in 26 are left to negotiate the newest
	// version both speak; the others are pinned to the session era (their
	// tools elicit and sample mid-call).
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "gostdio", "--", fixture)
	e.MustRun("add", "gostdio26", "--", fixture)
	e.MustRun("add", "gohttp", stateful)
	e.MustRun("add", "gohttp26", stateless)
	e.MustRun("add", "ts", tsPeer)
	e.MustRun("add", "ts26", tsPeer2026)
	e.MustRun("add", "everything", everything)
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, name := range []string{"gostdio", "gohttp"} {
		s = strings.Replace(s, `"`+name+`": {`, `"`+name+`": {"protocolVersion": "2025-11-25",`, 1)
	}
	var profiles []string
	for _, name := range []string{"gostdio", "gostdio26", "gohttp", "gohttp26", "ts", "ts26", "everything"} {
		profiles = append(profiles, fmt.Sprintf(`%q: {"servers": [%q], "naming": "bare"}`, name, name))
	}
	s = strings.Replace(s, `"mcp": {`, `"mcp": {"face": {"allowExternalCall": true}, "profiles": {`+strings.Join(profiles, ", ")+`},`, 1)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	_, base, token := faceURL(t, e)
	face := tokenProxy(t, base, token)

	suites := []struct {
		version, spec string
		targets       []conformanceTarget
	}{
		{"0.1.16", "", []conformanceTarget{
			{"go-sdk stdio", stateful, "gostdio"},
			{"go-sdk http", stateful, "gohttp"},
			{"ts peer", tsPeer, "ts"},
			{"server-everything", everything, "everything"},
		}},
		{"0.2.0-alpha.11", "2026-07-28", []conformanceTarget{
			{"go-sdk stdio", stateless, "gostdio26"},
			{"go-sdk http", stateless, "gohttp26"},
			{"ts peer", tsPeer, "ts"},
			{"ts peer 2026", tsPeer2026, "ts26"},
			{"server-everything", everything, "everything"},
		}},
	}
	for _, suite := range suites {
		label := suite.version
		if suite.spec != "" {
			label += "/" + suite.spec
		}
		t.Run(label, func(t *testing.T) {
			// Every target's two runs at once: each run is one node
			// process driving one server, mostly waiting, and the runs
			// share nothing but the daemon (whose faithfulness under
			// that load is part of what is tested).
			// Targets that share a server share its direct run.
			type pending struct{ direct, plexus func() (suiteRun, error) }
			var started []pending
			directs := map[string]func() (suiteRun, error){}
			for _, target := range suite.targets {
				direct := directs[target.direct]
				if direct == nil {
					direct = sync.OnceValues(startSuite(t, suite.version, suite.spec, target.direct))
					directs[target.direct] = direct
				}
				started = append(started, pending{
					direct: direct,
					plexus: startSuite(t, suite.version, suite.spec, face+"/mcp/"+target.profile),
				})
			}
			var results []conformanceResult
			for i, target := range suite.targets {
				direct, err := started[i].direct()
				if err != nil {
					t.Fatalf("%s directly: %v", target.name, err)
				}
				plexus, err := started[i].plexus()
				if err != nil {
					t.Fatalf("%s through Plexus: %v", target.name, err)
				}
				r := conformanceResult{target: target, direct: direct.verdicts, plexus: plexus.verdicts}
				results = append(results, r)
				for _, name := range r.lost() {
					if why, ok := answerless(t, direct, name); ok {
						t.Logf("%s: %s is lost through Plexus, and cannot be won: %s", target.name, name, why)
						fmt.Printf("%s: %s is lost through Plexus, and cannot be won: %s\n", target.name, name, why)
						continue
					}
					t.Errorf("%s: %s passes directly but not through Plexus", target.name, name)
				}
			}
			table := sideBySide(label, results)
			t.Log("\n" + table)
			fmt.Print(table)
			if t.Failed() {
				t.Logf("the daemon's log:\n%s", e.DaemonOutput())
			}
		})
	}
	t.Run("dns-rebinding", func(t *testing.T) {
		res := runSuite(t, "0.1.16", "", face+"/mcp", "dns-rebinding-protection")
		if !res["dns-rebinding-protection"] {
			t.Error("dns-rebinding-protection fails against the face")
		}
	})
}

// faceURL is the daemon's loopback base URL and token.
func faceURL(t *testing.T, e *testenv.Env) (*testenv.Env, string, string) {
	t.Helper()
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	return e, "http://" + st.HTTPAddr, strings.TrimSpace(string(tok))
}

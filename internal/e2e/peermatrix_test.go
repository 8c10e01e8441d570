package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestPeerMatrix is the peer matrix: the same set of tools,
// resources and prompts (testenv/peerserver, testenv/peerkit) served by
// the go-sdk, mcp-go (stdio, streamable HTTP stateful and stateless,
// legacy SSE), the TypeScript SDK 1.x and 2.x and fastmcp, put behind
// Plexus in a bare profile with the upstream era negotiated and pinned to
// the session era (protocolVersion 2025-11-25), reached through both faces
// (HTTP /mcp/NAME and `plexus mcp`) by the go-sdk's, mcp-go's and the
// TypeScript SDK's clients in both client eras. Every operation of
// matrixOps is compared with what the same client, in the same era, saw
// connected directly to the same server; a cell is equal or differs, and
// why. Nothing is run twice.
//
// The table goes to the log and to .cache/peer-matrix/table.txt under the
// repository, every observation to observations.json beside it. Every differing cell fails the test, unless
// PLEXUS_MATRIX_REPORT=1, which only reports them (to see where the
// product stands). The test command runs a slice of the clients
// (plainClients), PLEXUS_FULL_MATRIX=1 all of them in both eras.
// PLEXUS_MATRIX_ONLY=REGEXP runs only the setups whose
// label (server/upstream/face/client@era) matches; PLEXUS_MATRIX_IDLE
// (a Go duration) sets the idle pause of "idle".
//
// "idle" stands for the call after 6 minutes idle. What those 6
// minutes exercise, and how a short run covers each: Plexus's keep-alive
// of the upstream (every 30 s by default: here keepAliveMs is 2 s, so the
// pause holds three health checks, and the whole run dozens, each in the
// server's era; each check may take half the interval, and 1 s at 1 s
// lost servers to missed checks on a machine at load 40); the upstream server closing idle connections (Node's HTTP
// server does after 5 s: the default pause, 6 s, is longer, so a direct
// client's pooled connection to a TypeScript or fastmcp server is closed
// under it, as it would be in 6 minutes); fastmcp's own ping to its client
// every 5 s, answered by Plexus in the client's place; and every stream
// (standalone GET, legacy SSE) staying open across the pause. What 6
// minutes would add and this does not: Go's http.Transport drops idle
// client connections after 90 s (the client redials: no protocol step) and
// the face's session idle timeout is 30 minutes (not reached in 6; its
// expiry is TestFaceSessionsExpire's).
func TestPeerMatrix(t *testing.T) {
	t.Parallel()
	short := testing.Short()
	idle := 6 * time.Second
	if short {
		// The slice has no Node server (whose idle connections close
		// after 5 s); 3 s still holds a health check (keepAliveMs 2 s).
		idle = 3 * time.Second
	}
	if v := os.Getenv("PLEXUS_MATRIX_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("PLEXUS_MATRIX_IDLE: %v", err)
		}
		idle = d
	}
	var only *regexp.Regexp
	if v := os.Getenv("PLEXUS_MATRIX_ONLY"); v != "" {
		only = regexp.MustCompile(v)
	}
	report := os.Getenv("PLEXUS_MATRIX_REPORT") == "1"
	start := time.Now()

	servers := matrixServers(t, short)
	full := os.Getenv("PLEXUS_FULL_MATRIX") == "1"
	setups := matrixSetups(servers, short, full, only)
	if len(setups) == 0 {
		t.Skip("PLEXUS_MATRIX_ONLY matches no setup")
	}
	t.Logf("servers up after %s", time.Since(start).Round(time.Millisecond))
	e, base, token := matrixDaemon(t, servers)
	ready := matrixReady(t, e, servers)
	t.Logf("the daemon ready after %s", time.Since(start).Round(time.Millisecond))

	known := knownDifferences(t)
	results := runMatrix(t, e, base, token, servers, ready, setups, idle, known)
	table, differ, total := matrixTable(setups, results)
	t.Logf("peer matrix (%d setups, %s):\n%s", len(setups), time.Since(start).Round(time.Second), table)
	out := filepath.Join(testenv.RepoRoot(), ".cache", "peer-matrix", "table.txt")
	os.MkdirAll(filepath.Dir(out), 0o755)
	os.WriteFile(out, []byte(table), 0o644)
	// Every observation, for a closer look at a cell.
	raw := map[string]map[string]string{}
	for k, r := range results {
		raw[k] = r.obs
	}
	if b, err := json.MarshalIndent(raw, "", " "); err == nil {
		os.WriteFile(filepath.Join(filepath.Dir(out), "observations.json"), b, 0o644)
	}
	if differ == 0 {
		return
	}
	msg := fmt.Sprintf("%d of %d cells differ from direct (table in the log and in %s)", differ, total, out)
	if report {
		t.Log(msg)
		return
	}
	t.Log(msg)
	unknown, stillKnown := 0, map[string]bool{}
	for _, s := range setups {
		want, got := results[s.directOf().label()], results[s.label()]
		if s.upstream == "direct" || noBaseline(want) {
			continue
		}
		for _, op := range matrixOps {
			if want.obs[op] == got.obs[op] {
				continue
			}
			if pair := s.server + " " + op; known[pair] {
				stillKnown[pair] = true
				continue
			}
			if directTimedOut(want.obs[op]) || directReset(want.obs[op]) {
				// No baseline: the direct connection itself ran out of
				// time (a loaded machine), or lost its TCP connection, so
				// there is nothing to compare.
				t.Logf("%s %s not compared: direct failed in transit: %.200s", s.label(), op, want.obs[op])
				continue
			}
			unknown++
			t.Errorf("%s %s differs from direct, and that server and operation were equal: %s", s.label(), op, difference(want.obs[op], got.obs[op]))
		}
	}
	t.Logf("%d differing cells are of a server and operation in testdata/peermatrix/known.txt (%d pairs of its %d)", differ-unknown, len(stillKnown), len(known))
	if unknown > 0 {
		t.Logf("the daemon's log:\n%s", lastLines(e.DaemonOutput(), 200))
	}
}

// directTimedOut reports whether a direct observation is a client's
// timeout (the Go SDKs' and the TypeScript SDK's words for it).
func directTimedOut(obs string) bool {
	return strings.Contains(obs, "context deadline exceeded") || strings.Contains(obs, "Request timed out")
}

// directReset reports whether a direct observation is a TCP connection
// the server reset under the client: "idle" of mcp-go's client in front of
// a Node server, whose HTTP server closes a kept-alive connection after 5
// s idle, and the client, reusing it at the same moment on a loaded
// machine, has its POST reset (Go's HTTP client sends a POST only once).
// That is the client's pool and the server's timer, not MCP. The
// TypeScript SDK's clients meet the same race in Node's fetch, which
// reports it as "fetch failed" (a ts-sdk-1 client's resources/list in
// front of ts1-http, in a run of the package alone).
func directReset(obs string) bool {
	return strings.Contains(obs, "connection reset by peer") || strings.Contains(obs, "fetch failed")
}

// knownDifferences are the pairs "SERVER OPERATION" in which Plexus is
// known to differ from direct in some setups (testdata/peermatrix/known.txt):
// the matrix fails on a differing cell outside them, so what is equal stays
// equal, and a fix removes its pair.
func knownDifferences(t *testing.T) map[string]bool {
	b, err := os.ReadFile(filepath.Join("testdata", "peermatrix", "known.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[strings.Join(strings.Fields(line), " ")] = true
		}
	}
	return out
}

// matrixServer is one server of the matrix: how a client reaches it
// directly, and its entry in Plexus's configuration.
type matrixServer struct {
	name   string       // e.g. mcpgo-http
	direct peerEndpoint // how a client reaches it directly
	entry  string       // its extensions.json server entry (JSON)
}

// laned: the server's messages in the middle of a call come on a stream
// every call shares (stdio, legacy SSE), so its rows through Plexus run
// in lanes (peermatrix_ops_test.go), and the TypeScript rows, whose
// client runs in another process, reach it through entries of their own
// (NAME-ts, NAME-ts-pinned).
func (s matrixServer) laned() bool { return s.direct.kind == "stdio" || s.direct.kind == "sse" }

// entries are the server's entries in the daemon's configuration.
func (s matrixServer) entries() []string {
	out := []string{s.name, s.name + "-pinned"}
	if s.laned() {
		out = append(out, s.name+"-ts", s.name+"-ts-pinned")
	}
	return out
}

// matrixSetup is one row: a client in an era on a server, directly
// (upstream "direct") or through Plexus.
type matrixSetup struct {
	server   string
	upstream string // "direct", "negotiated" or "pinned"
	face     string // "http" or "stdio" ("" directly)
	client   string // "go-sdk", "mcp-go", "ts-sdk-1", "ts-sdk-2"
	era      string // the client's era
}

func (s matrixSetup) label() string {
	if s.upstream == "direct" {
		return fmt.Sprintf("%s/direct/%s@%s", s.server, s.client, s.era)
	}
	return fmt.Sprintf("%s/%s/%s/%s@%s", s.server, s.upstream, s.face, s.client, s.era)
}

// directOf is the direct setup this one is compared with.
func (s matrixSetup) directOf() matrixSetup {
	return matrixSetup{server: s.server, upstream: "direct", client: s.client, era: s.era}
}

const (
	era2026 = "2026-07-28"
	era2025 = "2025-11-25"
)

// matrixClients are the clients and the eras each speaks. The TypeScript
// SDK 1.x speaks no 2026-07-28; its 2.x client (@modelcontextprotocol/client)
// speaks both.
var matrixClients = []struct{ name, era string }{
	{"go-sdk", era2026}, {"go-sdk", era2025},
	{"mcp-go", era2026}, {"mcp-go", era2025},
	{"ts-sdk-2", era2026}, {"ts-sdk-2", era2025},
	{"ts-sdk-1", era2025},
}

// matrixServers starts the HTTP servers of the matrix (the stdio ones run
// per client) and returns every server. Under -short: the two of the
// slice (matrixSetups).
func matrixServers(t *testing.T, short bool) []matrixServer {
	bin := testenv.PeerServer(t)
	stdio := func(name string, argv ...string) matrixServer {
		return matrixServer{name: name, direct: peerEndpoint{kind: "stdio", command: argv},
			entry: fmt.Sprintf(`{"type": "stdio", "command": %s, "args": %s}`, jsonString(argv[0]), jsonList(argv[1:]))}
	}
	remote := func(name, kind, url string) matrixServer {
		typ := "http"
		if kind == "sse" {
			typ = "sse"
		}
		return matrixServer{name: name, direct: peerEndpoint{kind: kind, url: url},
			entry: fmt.Sprintf(`{"type": %q, "url": %s}`, typ, jsonString(url))}
	}
	var out []matrixServer
	var mu sync.Mutex
	var wg sync.WaitGroup
	add := func(f func() matrixServer) {
		wg.Go(func() {
			s := f()
			mu.Lock()
			out = append(out, s)
			mu.Unlock()
		})
	}
	add(func() matrixServer { return remote("gosdk-http", "http", testenv.StartPeerServer(t, "gosdk", "http")) })
	add(func() matrixServer { return stdio("mcpgo-stdio", bin, "-sdk", "mcpgo", "-transport", "stdio") })
	if !short {
		add(func() matrixServer { return stdio("gosdk-stdio", bin, "-sdk", "gosdk", "-transport", "stdio") })
		add(func() matrixServer { return remote("mcpgo-http", "http", testenv.StartPeerServer(t, "mcpgo", "http")) })
		add(func() matrixServer {
			return remote("mcpgo-stateless", "http", testenv.StartPeerServer(t, "mcpgo", "stateless"))
		})
		add(func() matrixServer { return remote("mcpgo-sse", "sse", testenv.StartPeerServer(t, "mcpgo", "sse")) })
		for _, s := range peerKitServers(t) {
			add(func() matrixServer {
				if s.kind == "stdio" {
					return stdio(s.name, s.command...)
				}
				return remote(s.name, s.kind, s.start(t))
			})
		}
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// plainClients are the clients of the test command's run (not
// PLEXUS_FULL_MATRIX): each library once, the Go and TypeScript 2.x
// clients in the era the other Go or TypeScript client does not take, so
// that both eras meet every server, face and upstream era.
var plainClients = map[string]bool{"go-sdk@" + era2026: true, "mcp-go@" + era2025: true, "ts-sdk-2@" + era2026: true, "ts-sdk-1@" + era2025: true}

// matrixSetups are the rows: every client and era directly and through
// Plexus, both upstream eras and both faces (with full; else the clients
// of plainClients). Under -short, a slice: the Go clients of those, in
// front of go-sdk over HTTP and mcp-go over stdio.
func matrixSetups(servers []matrixServer, short, full bool, only *regexp.Regexp) []matrixSetup {
	var out []matrixSetup
	for _, s := range servers {
		for _, c := range matrixClients {
			if short && strings.HasPrefix(c.name, "ts-") || !full && !plainClients[c.name+"@"+c.era] {
				continue
			}
			var rows []matrixSetup
			for _, up := range []string{"negotiated", "pinned"} {
				for _, face := range []string{"http", "stdio"} {
					rows = append(rows, matrixSetup{server: s.name, upstream: up, face: face, client: c.name, era: c.era})
				}
			}
			var kept []matrixSetup
			for _, r := range rows {
				if only == nil || only.MatchString(r.label()) {
					kept = append(kept, r)
				}
			}
			if len(kept) > 0 {
				out = append(out, kept[0].directOf())
				out = append(out, kept...)
			}
		}
	}
	return out
}

// matrixDaemon starts one daemon with every server twice — NAME with the
// era negotiated, NAME-pinned pinned to 2025-11-25 (a laned server twice
// more, for the TypeScript rows) — each in a bare
// profile of its name, written to the configuration before the daemon
// starts (so no `plexus add` can hold the test).
func matrixDaemon(t *testing.T, servers []matrixServer) (*testenv.Env, string, string) {
	e := testenv.New(t)
	var entries, profiles []string
	for _, s := range servers {
		for _, name := range s.entries() {
			extra := ""
			if strings.HasSuffix(name, "-pinned") {
				extra = `, "protocolVersion": "2025-11-25"`
			}
			entry := strings.TrimSuffix(s.entry, "}") + `, "keepAliveMs": 2000` + extra + "}"
			entries = append(entries, fmt.Sprintf("%q: %s", name, entry))
			profiles = append(profiles, fmt.Sprintf(`%q: {"servers": [%q], "naming": "bare"}`, name, name))
		}
	}
	cfg := `{"mcp": {"face": {"allowExternalCall": true}, "servers": {` + strings.Join(entries, ", ") +
		`}, "profiles": {` + strings.Join(profiles, ", ") + `}}}`
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	_, base, token := faceURL(t, e)
	return e, base, token
}

// matrixReady waits (30 s at most) until every server entry is ready or
// has failed, and returns each entry's state: a server that does not get ready fails its
// rows (the cells say so), not the whole matrix.
func matrixReady(t *testing.T, e *testenv.Env, servers []matrixServer) map[string]string {
	c := client.New(e.Home)
	states := map[string]string{}
	entryCount := 0
	for _, s := range servers {
		entryCount += len(s.entries())
	}
	began := time.Now()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		st, err := c.Status(ctx)
		cancel()
		if err == nil {
			settled := true
			for _, s := range st.Servers {
				states[s.Name] = s.State
				if s.LastError != "" {
					states[s.Name] += " (" + s.LastError + ")"
				}
				settled = settled && (s.State == "ready" || s.State == "failed" || s.State == "backoff" || s.State == "disabled")
			}
			if settled && len(st.Servers) == entryCount {
				if time.Since(began) > 10*time.Second {
					t.Logf("the servers took %s to settle: %v", time.Since(began).Round(time.Millisecond), states)
				}
				return states
			}
		}
		if time.Now().After(end) {
			t.Logf("not every server got ready within 30 s: %v", states)
			return states
		}
	}
}

// matrixResult is what one row saw: an observation per operation, or why
// it could not start.
type matrixResult struct {
	obs map[string]string
}

// runMatrix runs every row, at most a few at once, each session's idle
// pause not counting against that bound, and returns each row's result.
func runMatrix(t *testing.T, e *testenv.Env, base, token string, servers []matrixServer, ready map[string]string,
	setups []matrixSetup, idle time.Duration, known map[string]bool) map[string]matrixResult {
	byName := map[string]matrixServer{}
	for _, s := range servers {
		byName[s.name] = s
	}
	lanes := map[string]*lane{}
	for _, s := range servers {
		if s.laned() {
			for _, name := range s.entries() {
				lanes[name] = &lane{}
			}
		}
	}
	// profileOf is the entry (and bare profile) a row goes through.
	profileOf := func(s matrixSetup) string {
		profile := s.server
		if strings.HasPrefix(s.client, "ts-") && byName[s.server].laned() {
			profile += "-ts"
		}
		if s.upstream == "pinned" {
			profile += "-pinned"
		}
		return profile
	}
	endpoint := func(s matrixSetup) (peerEndpoint, string) {
		if s.upstream == "direct" {
			return byName[s.server].direct, ""
		}
		profile := profileOf(s)
		if st := ready[profile]; st != "ready" {
			return peerEndpoint{}, "the server is not ready: " + st
		}
		if s.face == "stdio" {
			return peerEndpoint{kind: "stdio", command: []string{e.Bin, "mcp", "--profile", profile}, env: []string{"PLEXUS_HOME=" + e.Home}}, ""
		}
		return peerEndpoint{kind: "http", url: base + "/mcp/" + profile, token: token}, ""
	}
	results := map[string]matrixResult{}
	var mu sync.Mutex
	put := func(s matrixSetup, r matrixResult) {
		mu.Lock()
		results[s.label()] = r
		mu.Unlock()
	}
	var ts []tsRow
	var wg sync.WaitGroup
	began := time.Now()
	var goDone atomic.Int64 // when the last Go row to end ended, since began
	busy := make(chan struct{}, testenv.RaceOr(48, 12))
	for i, s := range setups {
		ep, notReady := endpoint(s)
		if notReady != "" {
			put(s, matrixResult{obs: allOps(notReady)})
			continue
		}
		key := fmt.Sprintf("k%d", i)
		b := matrixBounds(s.server, known)
		if strings.HasPrefix(s.client, "ts-") {
			row := tsRow{ID: s.label(), Client: s.client, Era: s.era, Key: key, Endpoint: tsEndpointOf(ep), Bounds: b.ts()}
			if s.upstream != "direct" && lanes[profileOf(s)] != nil {
				row.Lane = profileOf(s)
			}
			ts = append(ts, row)
			continue
		}
		wg.Go(func() {
			defer func() { goDone.Store(int64(time.Since(began))) }()
			busy <- struct{}{}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			connect := connectGoSDK
			if s.client == "mcp-go" {
				connect = connectMCPGo
			}
			sess, err := connect(ctx, ep, s.era)
			if err != nil {
				<-busy
				put(s, matrixResult{obs: allOps("connect: " + errText(err))})
				return
			}
			defer sess.close()
			var l *lane
			if s.upstream != "direct" {
				l = lanes[profileOf(s)]
			}
			opsBegan := time.Now()
			obs := runOps(ctx, sess, key, l, b)
			if d := time.Since(opsBegan); d > 20*time.Second {
				t.Logf("%s: its operations took %s", s.label(), d.Round(time.Second))
			}
			<-busy
			time.Sleep(idle)
			hold(l, false, func() { obs["idle"] = runIdle(ctx, sess, b) })
			put(s, matrixResult{obs: obs})
		})
	}
	// The TypeScript rows in two node processes (one core each at most),
	// the rows of one server in the same one (its lanes are the process's).
	serverIndex := map[string]int{}
	for i, s := range servers {
		serverIndex[s.name] = i
	}
	var halves [2][]tsRow
	for _, r := range ts {
		server, _, _ := strings.Cut(r.ID, "/")
		halves[serverIndex[server]%2] = append(halves[serverIndex[server]%2], r)
	}
	for _, rows := range halves {
		if len(rows) == 0 {
			continue
		}
		wg.Go(func() {
			for id, obs := range runTSClients(t, rows, idle) {
				mu.Lock()
				results[id] = matrixResult{obs: obs}
				mu.Unlock()
			}
			t.Logf("%d TypeScript rows ended after %s", len(rows), time.Since(began).Round(time.Second))
		})
	}
	wg.Wait()
	t.Logf("the last Go row ended after %s", time.Duration(goDone.Load()).Round(time.Second))
	return results
}

// allOps is the same observation for every operation.
func allOps(why string) map[string]string {
	m := map[string]string{}
	for _, op := range matrixOps {
		m[op] = why
	}
	return m
}

func jsonList(ss []string) string {
	b, _ := json.Marshal(ss)
	if ss == nil {
		return "[]"
	}
	return string(b)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

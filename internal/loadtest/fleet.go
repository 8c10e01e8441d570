package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fleet: what a machine's MCP servers cost when several clients use
// the same popular servers — each client starting its own, as editors do,
// against Plexus running one of each, eagerly or on demand. The servers
// are eight from npm that start and list their tools offline (the API
// servers with stand-in keys: nothing is called that needs the network),
// pinned by fleet/package.json and package-lock.json and installed with
// npm ci. The numbers are each process's RSS from /proc, summed over
// every process involved: the servers (and their children), the daemon,
// and the `plexus mcp` bridge each client runs; the load tool itself,
// which plays the clients, is not counted. RSS counts a page shared by
// several processes (a program's text: node's, plexus's) once in each;
// each setup's PSS beside it shares such a page among them, so the sum is
// what the machine spends.

// FleetServer is one server of the fleet.
type FleetServer struct {
	Name    string
	Package string   // its npm package
	Bin     string   // its executable in node_modules/.bin
	Args    []string // after the executable
	Env     map[string]string
	// Spec, if set, is PACKAGE@VERSION: the server runs as `npx -y Spec
	// Args`, as its README tells editors to run it (FleetOptions.Npx).
	Spec string
}

// FleetServers are the eight servers; dir is a folder the filesystem
// server may read.
func FleetServers(dir string) []FleetServer {
	return []FleetServer{
		{Name: "memory", Package: "@modelcontextprotocol/server-memory", Bin: "mcp-server-memory", Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		{Name: "filesystem", Package: "@modelcontextprotocol/server-filesystem", Bin: "mcp-server-filesystem", Args: []string{dir}},
		{Name: "everything", Package: "@modelcontextprotocol/server-everything", Bin: "mcp-server-everything"},
		{Name: "thinking", Package: "@modelcontextprotocol/server-sequential-thinking", Bin: "mcp-server-sequential-thinking"},
		{Name: "github", Package: "@modelcontextprotocol/server-github", Bin: "mcp-server-github", Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "stand-in"}},
		{Name: "brave", Package: "@modelcontextprotocol/server-brave-search", Bin: "mcp-server-brave-search", Env: map[string]string{"BRAVE_API_KEY": "stand-in"}},
		{Name: "slack", Package: "@modelcontextprotocol/server-slack", Bin: "mcp-server-slack", Env: map[string]string{"SLACK_BOT_TOKEN": "stand-in", "SLACK_TEAM_ID": "T0"}},
		{Name: "maps", Package: "@modelcontextprotocol/server-google-maps", Bin: "mcp-server-google-maps", Env: map[string]string{"GOOGLE_MAPS_API_KEY": "stand-in"}},
	}
}

// The first call of every measurement: server-memory's read_graph, which
// reads a file and needs no network.
const (
	fleetCallServer = "memory"
	fleetCallTool   = "read_graph"
)

// FleetOptions configure Fleet.
type FleetOptions struct {
	Plexus  string // the plexus binary
	Clients int    // default 5
	// Npx runs every server as `npx -y PACKAGE@VERSION` (the versions the
	// fleet pins), in both setups, from an npx cache of the fleet's own
	// (.cache/fleet-npx) that it fills first; else each server's
	// installed bin runs directly.
	Npx      bool
	Progress io.Writer
}

// FleetRow is one setup's numbers.
type FleetRow struct {
	Setup string `json:"setup"`
	RSS   int64  `json:"rssBytes"`
	// PSS is the proportional set size of the same processes, summed: a
	// page mapped by n processes counts 1/n in each (/proc/PID/smaps_rollup).
	PSS       int64 `json:"pssBytes,omitempty"`
	Processes int   `json:"processes"`
	// Daemon is the daemon's own RSS (0 without one); Bridges the RSS of
	// the clients' `plexus mcp` processes, part of RSS.
	Daemon  int64 `json:"daemonRssBytes,omitempty"`
	Bridges int64 `json:"bridgesRssBytes,omitempty"`
	// Shims is the RSS of the daemon's lifeline shims, one in front of
	// each server it runs, part of RSS. What is neither the daemon, a
	// bridge nor a shim is the servers'.
	Shims int64         `json:"shimsRssBytes,omitempty"`
	Cold  time.Duration `json:"coldFirstCallNs"`
	Warm  time.Duration `json:"warmFirstCallNs"`
}

// FleetReport is Fleet's result.
type FleetReport struct {
	Clients int        `json:"clients"`
	Npx     bool       `json:"npx,omitempty"`
	Servers []string   `json:"servers"`
	Rows    []FleetRow `json:"rows"`
}

// Fleet installs the servers (npm ci into a cache folder beside the
// package.json, once) and measures: (a) every client starting its own
// servers; (b) Plexus, every server eager; (c) Plexus on demand, idle, and
// after one call to one server.
func Fleet(ctx context.Context, o FleetOptions) (*FleetReport, error) {
	if o.Clients <= 0 {
		o.Clients = 5
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	binDir, err := fleetInstall(o.Progress)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "plexus-fleet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	servers := FleetServers(work)
	if o.Npx {
		if err := fleetNpx(servers, binDir, o.Progress); err != nil {
			return nil, err
		}
	}
	rep := &FleetReport{Clients: o.Clients, Npx: o.Npx}
	for _, s := range servers {
		rep.Servers = append(rep.Servers, s.Name)
	}
	fmt.Fprintln(o.Progress, "(a) each client starts its own servers…")
	row, err := fleetDirect(ctx, binDir, servers, o.Clients)
	if err != nil {
		return nil, fmt.Errorf("(a) direct: %w", err)
	}
	rep.Rows = append(rep.Rows, row)
	fmt.Fprintln(o.Progress, "(b) Plexus, every server eager…")
	rows, err := fleetPlexus(ctx, o.Plexus, binDir, servers, o.Clients, false)
	if err != nil {
		return nil, fmt.Errorf("(b) Plexus eager: %w", err)
	}
	rep.Rows = append(rep.Rows, rows...)
	fmt.Fprintln(o.Progress, "(c) Plexus on demand…")
	rows, err = fleetPlexus(ctx, o.Plexus, binDir, servers, o.Clients, true)
	if err != nil {
		return nil, fmt.Errorf("(c) Plexus on demand: %w", err)
	}
	rep.Rows = append(rep.Rows, rows...)
	return rep, nil
}

// fleetInstall runs npm ci for fleet/ into .cache/fleet beside this
// source's repository (or the folder PLEXUS_FLEET_DIR names) unless the
// lock there is the same, and returns node_modules/.bin.
func fleetInstall(progress io.Writer) (string, error) {
	src, err := fleetSource()
	if err != nil {
		return "", err
	}
	dst := os.Getenv("PLEXUS_FLEET_DIR")
	if dst == "" {
		dst = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(src))), ".cache", "fleet")
	}
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dst, "node_modules", ".bin")
	if have, err := os.ReadFile(filepath.Join(dst, "package-lock.json")); err == nil && string(have) == string(lock) {
		if _, err := os.Stat(filepath.Join(bin, "mcp-server-memory")); err == nil {
			return bin, nil
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(progress, "installing the fleet's servers with npm ci in %s…\n", dst)
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dst
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %w\n%s", dst, err, out)
	}
	return bin, nil
}

// fleetNpx makes servers run through npx: each one's Spec from the
// fleet's pins (the package.json beside node_modules/.bin), its npm cache
// .cache/fleet-npx, which npx fills here, one package after the other, so
// that no measured start downloads.
func fleetNpx(servers []FleetServer, binDir string, progress io.Writer) error {
	dir := filepath.Dir(filepath.Dir(binDir))
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return err
	}
	cache := filepath.Join(filepath.Dir(dir), "fleet-npx")
	for i := range servers {
		s := &servers[i]
		v, ok := pj.Dependencies[s.Package]
		if !ok {
			return fmt.Errorf("%s is not pinned in %s", s.Package, dir)
		}
		s.Spec = s.Package + "@" + v
		env := map[string]string{"npm_config_cache": cache, "npm_config_update_notifier": "false"}
		maps.Copy(env, s.Env)
		s.Env = env
		fmt.Fprintf(progress, "npx cache: %s…\n", s.Spec)
		cmd := exec.Command("npx", "-y", "--package="+s.Spec, "-c", "true")
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npx -y %s: %w\n%s", s.Spec, err, out)
		}
	}
	return nil
}

// fleetSource finds fleet/ (package.json and its lock) from the working
// folder up: the tool runs from the repository.
func fleetSource() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "internal", "loadtest", "fleet")
		if _, err := os.Stat(filepath.Join(p, "package-lock.json")); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("--fleet runs from the Plexus repository: internal/loadtest/fleet/package.json not found above this folder")
		}
		dir = parent
	}
}

func fleetArgv(binDir string, s FleetServer) []string {
	if s.Spec != "" {
		return append([]string{"npx", "-y", s.Spec}, s.Args...)
	}
	return append([]string{filepath.Join(binDir, s.Bin)}, s.Args...)
}

// fleetClient is one client's sessions, each with its own process.
type fleetClient struct {
	sessions map[string]*mcp.ClientSession
	cmds     []*exec.Cmd
}

func (c *fleetClient) close() {
	for _, s := range c.sessions {
		s.Close()
	}
}

// connectDirect starts server s for one client and opens its session, as
// an editor does (initialize, then tools/list).
func connectDirect(ctx context.Context, binDir string, s FleetServer) (*mcp.ClientSession, *exec.Cmd, error) {
	argv := fleetArgv(binDir, s)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", s.Name, err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return nil, nil, fmt.Errorf("%s: tools/list: %w", s.Name, err)
	}
	return cs, cmd, nil
}

func callFirst(ctx context.Context, cs *mcp.ClientSession, tool string) (time.Duration, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return 0, err
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return 0, fmt.Errorf("%s answered an error: %s", tool, b)
	}
	return time.Since(start), nil
}

// fleetDirect: every client starts its own eight servers.
func fleetDirect(ctx context.Context, binDir string, servers []FleetServer, clients int) (FleetRow, error) {
	row := FleetRow{Setup: "(a) each client its own servers"}
	var all []*fleetClient
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	var memory FleetServer
	for _, s := range servers {
		if s.Name == fleetCallServer {
			memory = s
		}
	}
	// Cold: a client's first call, from the start of its server.
	start := time.Now()
	cs, cmd, err := connectDirect(ctx, binDir, memory)
	if err != nil {
		return row, err
	}
	if _, err := callFirst(ctx, cs, fleetCallTool); err != nil {
		return row, err
	}
	row.Cold = time.Since(start)
	first := &fleetClient{sessions: map[string]*mcp.ClientSession{memory.Name: cs}, cmds: []*exec.Cmd{cmd}}
	all = append(all, first)
	for i := range clients {
		c := first
		if i > 0 {
			c = &fleetClient{sessions: map[string]*mcp.ClientSession{}}
			all = append(all, c)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, len(servers))
		for _, s := range servers {
			if _, ok := c.sessions[s.Name]; ok {
				continue
			}
			wg.Go(func() {
				cs, cmd, err := connectDirect(ctx, binDir, s)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				c.sessions[s.Name], c.cmds = cs, append(c.cmds, cmd)
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return row, err
		}
	}
	// Warm: a call on a server that runs.
	var err2 error
	if row.Warm, err2 = callFirst(ctx, all[1].sessions[fleetCallServer], fleetCallTool); err2 != nil {
		return row, err2
	}
	settle()
	var pids []int
	for _, c := range all {
		for _, cmd := range c.cmds {
			pids = append(pids, cmd.Process.Pid)
		}
	}
	row.RSS, row.PSS, row.Processes = treeMemory(pids)
	return row, nil
}

// fleetPlexus: one daemon runs the servers; each client runs `plexus mcp`
// as an editor would, and calls through it.
func fleetPlexus(ctx context.Context, bin, binDir string, servers []FleetServer, clients int, onDemand bool) ([]FleetRow, error) {
	dir, err := os.MkdirTemp("", "plexus-load-")
	if err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "home")
	if err := writeFleetConfig(home, binDir, servers, onDemand, 0); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	d, err := startDaemonIn(ctx, bin, dir, home)
	if err != nil {
		return nil, err
	}
	if _, err := d.WaitServers(ctx); err != nil {
		d.Stop()
		return nil, err
	}
	if onDemand {
		// The first start learned the catalogs; a daemon started again
		// lists them and starts nothing.
		d.keepDir = true
		d.Stop()
		if d, err = startDaemonIn(ctx, bin, dir, home); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	defer d.Stop()
	var bridges []*mcp.ClientSession
	var pids []int
	defer func() {
		for _, b := range bridges {
			b.Close()
		}
	}()
	open := func() (*mcp.ClientSession, error) {
		cmd := exec.Command(bin, "mcp")
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+home)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return nil, fmt.Errorf("plexus mcp: %w", err)
		}
		bridges = append(bridges, cs)
		pids = append(pids, cmd.Process.Pid)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return nil, err
		}
		return cs, nil
	}
	tool := fleetCallServer + "_" + fleetCallTool
	mode := "(b) Plexus, eager"
	if onDemand {
		mode = "(c) Plexus on demand"
	}
	// Cold: a client's start to its first answer; on demand, that start
	// includes the server's.
	start := time.Now()
	first, err := open()
	if err != nil {
		return nil, err
	}
	var rows []FleetRow
	if onDemand {
		// Idle: every client connected, nothing called yet.
		for range clients - 1 {
			if _, err := open(); err != nil {
				return nil, err
			}
		}
		settle()
		rows = append(rows, measureDaemon(FleetRow{Setup: mode + ", idle"}, d.PID, pids))
		start = time.Now()
	}
	if _, err := callFirst(ctx, first, tool); err != nil {
		return nil, err
	}
	cold := time.Since(start)
	if !onDemand {
		for range clients - 1 {
			if _, err := open(); err != nil {
				return nil, err
			}
		}
	}
	warm, err := callFirst(ctx, bridges[len(bridges)-1], tool)
	if err != nil {
		return nil, err
	}
	settle()
	setup := mode
	if onDemand {
		setup += ", after one call to " + fleetCallServer
	}
	rows = append(rows, measureDaemon(FleetRow{Setup: setup, Cold: cold, Warm: warm}, d.PID, pids))
	return rows, nil
}

// measureDaemon fills row's memory: the daemon's tree and the bridges.
func measureDaemon(row FleetRow, daemon int, bridges []int) FleetRow {
	row.RSS, row.PSS, row.Processes = treeMemory(append([]int{daemon}, bridges...))
	if p, err := ReadProc(daemon); err == nil {
		row.Daemon = p.RSS
	}
	row.Bridges, _, _ = treeMemory(bridges)
	row.Shims = shimsRSS(daemon)
	return row
}

// shimCommand is the hidden subcommand a lifeline shim runs as
// (cmd/plexus/internal/shimentry.Command).
const shimCommand = "__plexus-shim"

// parentOf is the parent of pid from /proc/PID/stat, 0 if unknown.
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// shimsRSS sums the RSS of the lifeline shims among daemon's children.
func shimsRSS(daemon int) int64 {
	var total int64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		argv, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if a := strings.Split(string(argv), "\x00"); len(a) < 2 || a[1] != shimCommand {
			continue
		}
		if parentOf(pid) != daemon {
			continue
		}
		if p, err := ReadProc(pid); err == nil {
			total += p.RSS
		}
	}
	return total
}

// writeFleetConfig makes the home (0700) with the servers, the face's
// external calls on, and each server eager or on demand (stopped after
// idleStop unused, if not 0).
func writeFleetConfig(home, binDir string, servers []FleetServer, onDemand bool, idleStop time.Duration) error {
	m := map[string]any{}
	for _, s := range servers {
		argv := fleetArgv(binDir, s)
		sc := map[string]any{"type": "stdio", "command": argv[0], "args": argv[1:], "start": "eager"}
		if onDemand {
			sc["start"] = "onDemand"
		}
		if idleStop > 0 {
			sc["idleStopMs"] = idleStop.Milliseconds()
		}
		if len(s.Env) > 0 {
			env := map[string]any{}
			for k := range s.Env {
				env[k] = map[string]string{"env": "FLEET_" + k}
			}
			sc["env"] = env
		}
		m[s.Name] = sc
	}
	cfg := map[string]any{"mcp": map[string]any{"face": map[string]bool{"allowExternalCall": true}, "servers": m}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	// The stand-in keys reach the servers as the daemon's environment.
	for _, s := range servers {
		for k, v := range s.Env {
			os.Setenv("FLEET_"+k, v)
		}
	}
	return os.WriteFile(filepath.Join(home, "extensions.json"), b, 0o600)
}

// settle lets the processes finish starting before their memory is read.
func settle() { time.Sleep(2 * time.Second) }

// treeMemory sums the RSS and the PSS of the processes pids and all
// their descendants, and counts them.
func treeMemory(pids []int) (rss, pss int64, n int) {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(pid); ppid != 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	seen := map[int]bool{}
	var walk func(int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		if p, err := ReadProc(pid); err == nil {
			rss += p.RSS
		}
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup")); err == nil {
			pss += pssOf(b)
		}
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, p := range pids {
		walk(p)
	}
	return rss, pss, len(seen)
}

// pssOf finds "Pss:  1234 kB" in the text of /proc/PID/smaps_rollup, in
// bytes; 0 if it is not there.
func pssOf(rollup []byte) int64 {
	pss, _ := kbLine(rollup, "Pss:")
	return pss
}

// printFleet writes the report as a table.
func printFleet(w io.Writer, r *FleetReport) {
	fmt.Fprintf(w, "%d clients, the same %d servers each: %s\n", r.Clients, len(r.Servers), strings.Join(r.Servers, ", "))
	if r.Npx {
		fmt.Fprintln(w, "every server started as `npx -y PACKAGE@VERSION`")
	}
	fmt.Fprintf(w, "%-48s %9s %9s %9s %9s %9s %9s %9s %10s %10s\n", "setup", "RSS MiB", "daemon", "bridges", "shims", "servers", "PSS MiB", "processes", "cold call", "warm call")
	rows := append([]FleetRow(nil), r.Rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Setup < rows[j].Setup })
	var a, b, aP, bP int64
	for _, row := range rows {
		cold, warm := "—", "—"
		if row.Cold > 0 {
			cold = row.Cold.Round(time.Millisecond).String()
		}
		if row.Warm > 0 {
			warm = row.Warm.Round(100 * time.Microsecond).String()
		}
		servers := row.RSS - row.Daemon - row.Bridges - row.Shims
		fmt.Fprintf(w, "%-48s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9d %10s %10s\n", row.Setup, mib(row.RSS), mib(row.Daemon), mib(row.Bridges), mib(row.Shims), mib(servers), mib(row.PSS), row.Processes, cold, warm)
		if strings.HasPrefix(row.Setup, "(a)") {
			a, aP = row.RSS, row.PSS
		} else if strings.HasPrefix(row.Setup, "(b)") {
			b, bP = row.RSS, row.PSS
		}
	}
	if a > 0 && b > 0 {
		fmt.Fprintf(w, "(b) / (a) = %.3f by RSS", float64(b)/float64(a))
		if aP > 0 && bP > 0 {
			fmt.Fprintf(w, ", %.3f by PSS", float64(bP)/float64(aP))
		}
		fmt.Fprintln(w)
	}
}

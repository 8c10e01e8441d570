package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// This file is the harness of the fault-injection tests: settings written
// by hand, the fault server's files, calls with their _meta markers, a
// recorder of the daemon's event stream, a background caller of another
// server, and process-group checks through /proc.

// stdioServer is one server entry of extensions.json.
func stdioServer(command string, args ...string) map[string]any {
	sc := map[string]any{"type": "stdio", "command": command}
	if len(args) > 0 {
		sc["args"] = args
	}
	return sc
}

// writeSettings writes extensions.json by hand, as a user would, with
// mcp.retryMs (if > 0) and the given servers.
func writeSettings(t *testing.T, e *testenv.Env, retryMs int, servers map[string]any) {
	t.Helper()
	mcp := map[string]any{"servers": servers}
	if retryMs > 0 {
		mcp["retryMs"] = retryMs
	}
	writeJSON(t, e, map[string]any{"mcp": mcp})
}

// writeJSON writes v as extensions.json.
func writeJSON(t *testing.T, e *testenv.Env, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, e, string(b))
}

// writeRaw writes extensions.json as given, valid or not.
func writeRaw(t *testing.T, e *testenv.Env, content string) {
	t.Helper()
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readSettings reads extensions.json as generic JSON, for editing by hand.
func readSettings(t *testing.T, e *testenv.Env) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("extensions.json: %v\n%s", err, b)
	}
	return m
}

// faultFiles are the files one fault server is driven and observed by.
type faultFiles struct {
	Fault  string // the fault is active while this file exists
	Count  string // one line per invocation of tool work
	Starts string // one line per process start
}

func newFaultFiles(t *testing.T) faultFiles {
	dir := t.TempDir()
	return faultFiles{
		Fault:  filepath.Join(dir, "fault"),
		Count:  filepath.Join(dir, "count"),
		Starts: filepath.Join(dir, "starts"),
	}
}

// args returns the fault server's flags for these files, then extra.
func (f faultFiles) args(extra ...string) []string {
	return append([]string{"--fault-file", f.Fault, "--count-file", f.Count, "--start-file", f.Starts}, extra...)
}

func (f faultFiles) set(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(f.Fault, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (f faultFiles) clear(t *testing.T) {
	t.Helper()
	if err := os.Remove(f.Fault); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// count is how many times tool work was invoked.
func (f faultFiles) count(t *testing.T) int { return len(fileLines(t, f.Count)) }

// started is one line of the start file.
type started struct {
	What string // "server" or "grandchild"
	PID  int
	At   time.Time
}

// starts returns the processes the fault server started, in order.
func (f faultFiles) starts(t *testing.T) []started {
	t.Helper()
	var out []started
	for _, l := range fileLines(t, f.Starts) {
		var s started
		fs := strings.Fields(l)
		if len(fs) != 3 {
			t.Fatalf("start file line %q", l)
		}
		pid, err1 := strconv.Atoi(fs[1])
		ns, err2 := strconv.ParseInt(fs[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("start file line %q", l)
		}
		s.What, s.PID, s.At = fs[0], pid, time.Unix(0, ns)
		out = append(out, s)
	}
	return out
}

// serverStarts counts the server processes started so far.
func (f faultFiles) serverStarts(t *testing.T) int {
	n := 0
	for _, s := range f.starts(t) {
		if s.What == "server" {
			n++
		}
	}
	return n
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// callResult is what `plexus call --json` printed.
type callResult struct {
	IsError bool           `json:"isError"`
	Meta    map[string]any `json:"_meta"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`

	Code    int           // the command's exit code
	Elapsed time.Duration // how long the command took
}

func (r callResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func (r callResult) meta(key string) string {
	s, _ := r.Meta[key].(string)
	return s
}

// call runs `plexus call --json` and returns the one result it printed.
func call(t *testing.T, e *testenv.Env, tool, args string) callResult {
	t.Helper()
	start := time.Now()
	r := e.Run("", "call", "--json", tool, args)
	return parseCall(t, tool, r, time.Since(start))
}

// callAsync starts `plexus call --json` in the background; parse its
// outcome with parseCall on the test's goroutine.
func callAsync(e *testenv.Env, tool, args string) <-chan asyncCall {
	ch := make(chan asyncCall, 1)
	start := time.Now()
	cmd := exec.Command(e.Bin, "call", "--json", tool, args)
	cmd.Env = append(append(os.Environ(), "PLEXUS_HOME="+e.Home), e.ExtraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := e.Start(cmd)
	go func() {
		if err == nil {
			err = cmd.Wait()
		}
		r := testenv.Result{Stdout: out.String(), Stderr: errb.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.Code = ee.ExitCode()
		} else if err != nil {
			r.Code, r.Stderr = -1, err.Error()
		}
		ch <- asyncCall{r, time.Since(start)}
	}()
	return ch
}

type asyncCall struct {
	r       testenv.Result
	elapsed time.Duration
}

// resultOf decodes a result from the API; an undecodable one is an error.
func resultOf(res *apitype.CallResult) callResult {
	var r callResult
	if err := json.Unmarshal(res.Result, &r); err != nil {
		r.IsError = true
		r.Content = append(r.Content, struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", "undecodable result: " + err.Error()})
	}
	return r
}

// parseCall decodes the one result a call printed.
func parseCall(t *testing.T, tool string, r testenv.Result, elapsed time.Duration) callResult {
	t.Helper()
	var res callResult
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("plexus call %s: exit %d, no result: %v\nstdout: %s\nstderr: %s", tool, r.Code, err, r.Stdout, r.Stderr)
	}
	if dec.More() {
		t.Fatalf("plexus call %s printed more than one result:\n%s", tool, r.Stdout)
	}
	res.Code, res.Elapsed = r.Code, elapsed
	if res.IsError != (r.Code != 0) {
		t.Fatalf("plexus call %s: isError %v but exit %d", tool, res.IsError, r.Code)
	}
	return res
}

// mustWork calls tool work of a fault server and wants its normal answer.
func mustWork(t *testing.T, e *testenv.Env, tool, text string) {
	t.Helper()
	res := call(t, e, tool, `{"text":"`+text+`"}`)
	if res.IsError || res.text() != "worked: "+text {
		t.Fatalf("work %q: %+v (%s)", text, res, res.text())
	}
}

// toolOf returns the Plexus name of one tool of a server.
func toolOf(t *testing.T, e *testenv.Env, server, tool string) string {
	t.Helper()
	return toolNamed(t, tools(t, e, "--server", server), server, tool).Name
}

// statusOf returns one server's status; the listing is not activity, so it
// never triggers a probe.
func statusOf(t *testing.T, e *testenv.Env, name string) apitype.ServerStatus {
	t.Helper()
	st, ok := servers(t, e)[name]
	if !ok {
		t.Fatalf("server %s is not listed", name)
	}
	return st
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wantExitCode(t *testing.T, st apitype.ServerStatus, want int) {
	t.Helper()
	if st.ExitCode == nil || *st.ExitCode != want {
		got := "none"
		if st.ExitCode != nil {
			got = strconv.Itoa(*st.ExitCode)
		}
		t.Errorf("%s: exit code %s, want %d (status %+v)", st.Name, got, want, st)
	}
}

func stderrHas(st apitype.ServerStatus, sub string) bool {
	for _, l := range st.Stderr {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// events records the daemon's event stream from the moment it is opened.
type events struct {
	mu    sync.Mutex
	list  []apitype.Event // guarded by mu
	ended error           // guarded by mu; why the stream ended
	more  chan struct{}   // closed and replaced on every change; guarded by mu
}

// watchEvents opens the event stream; it is read until the test ends.
func watchEvents(t *testing.T, e *testenv.Env) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := client.New(e.Home).Events(ctx)
	if err != nil {
		cancel()
		t.Fatalf("opening the event stream: %v", err)
	}
	l := &events{more: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := s.Next()
			l.mu.Lock()
			if err != nil {
				l.ended = err
			} else {
				l.list = append(l.list, ev)
			}
			close(l.more)
			l.more = make(chan struct{})
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// Next must not run concurrently with Close: canceling ends it first.
	t.Cleanup(func() { cancel(); <-done; s.Close() })
	return l
}

// wait returns the first recorded event that matches.
func (l *events) wait(t *testing.T, d time.Duration, what string, match func(apitype.Event) bool) apitype.Event {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		l.mu.Lock()
		for _, ev := range l.list {
			if match(ev) {
				l.mu.Unlock()
				return ev
			}
		}
		ended, more := l.ended, l.more
		l.mu.Unlock()
		if ended != nil {
			t.Fatalf("waiting for %s: the event stream ended: %v", what, ended)
		}
		select {
		case <-more:
		case <-timer.C:
			t.Fatalf("no event %s within %s", what, d)
		}
	}
}

// matching returns the recorded events that match, in order.
func (l *events) matching(match func(apitype.Event) bool) []apitype.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []apitype.Event
	for _, ev := range l.list {
		if match(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// count counts the recorded events that match.
func (l *events) count(match func(apitype.Event) bool) int { return len(l.matching(match)) }

// serverState matches a server's status event in a state.
func serverState(name, state string) func(apitype.Event) bool {
	return func(ev apitype.Event) bool {
		return ev.Type == apitype.EventServer && ev.Server == name && ev.Status != nil && ev.Status.State == state
	}
}

// caller calls a tool of another server in the background, to show that a
// fault of one server does not reach the others. Calls are activity: they
// also let the daemon probe a left-out server.
type caller struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	ok       []time.Time // when each successful call started; guarded by mu
	failures []string    // guarded by mu
	slowest  time.Duration
}

func keepCalling(t *testing.T, e *testenv.Env, tool string) *caller {
	c := &caller{stop: make(chan struct{}), done: make(chan struct{})}
	cl := client.New(e.Home)
	args := json.RawMessage(`{"text":"still here"}`)
	go func() {
		defer close(c.done)
		for {
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			res, err := cl.Call(ctx, apitype.CallRequest{Name: tool, Arguments: args})
			cancel()
			d := time.Since(start)
			c.mu.Lock()
			c.slowest = max(c.slowest, d)
			switch {
			case err != nil:
				c.failures = append(c.failures, err.Error())
			case resultOf(res).IsError || resultOf(res).text() != "still here":
				c.failures = append(c.failures, string(res.Result))
			default:
				c.ok = append(c.ok, start)
			}
			c.mu.Unlock()
			select {
			case <-c.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(c.halt)
	return c
}

func (c *caller) halt() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// check stops the caller and fails the test unless every call succeeded.
func (c *caller) check(t *testing.T) {
	t.Helper()
	c.halt()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.failures) > 0 {
		t.Errorf("the other server failed %d of %d calls; first: %s", len(c.failures), len(c.failures)+len(c.ok), c.failures[0])
	}
	if len(c.ok) == 0 {
		t.Error("the other server answered no call")
	}
	if c.slowest > 5*time.Second {
		t.Errorf("a call to the other server took %s", c.slowest)
	}
	t.Logf("the other server answered %d calls, slowest %s", len(c.ok), c.slowest.Round(time.Millisecond))
}

// between counts the successful calls that started within [from, to].
func (c *caller) between(from, to time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, at := range c.ok {
		if !at.Before(from) && !at.After(to) {
			n++
		}
	}
	return n
}

// procInfo is one process as /proc/PID/stat describes it.
type procInfo struct {
	PID   int
	Comm  string
	State byte
	PGID  int
}

// readProc reads /proc/PID/stat: "pid (comm) state ppid pgrp ...", where
// comm may hold spaces and parentheses.
func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return procInfo{}, false
	}
	f := bytes.Fields(b[closing+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	pgid, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procInfo{}, false
	}
	return procInfo{PID: pid, Comm: string(b[open+1 : closing]), State: f[0][0], PGID: pgid}, true
}

// live reports whether the process runs: it exists and is not a zombie.
func (p procInfo) live() bool { return p.State != 'Z' && p.State != 'X' }

// groupMembers scans /proc for the live processes of process group pgid.
// kill(-pgid, 0) alone cannot tell a live process from a zombie, nor say
// which process is left.
func groupMembers(t *testing.T, pgid int) []procInfo {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []procInfo
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok && p.PGID == pgid && p.live() {
			out = append(out, p)
		}
	}
	return out
}

// waitGroupEmpty waits until no live process of group pgid is left.
func waitGroupEmpty(t *testing.T, pgid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := groupMembers(t, pgid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has %d live processes after %s: %+v", pgid, len(left), d, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noStrays fails if a process the fault server started is still alive
// outside the server's current process group (0: none is current).
func noStrays(t *testing.T, f faultFiles, currentGroup int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var strays []procInfo
		for _, s := range f.starts(t) {
			if p, ok := readProc(s.PID); ok && p.live() && (currentGroup == 0 || p.PGID != currentGroup) {
				strays = append(strays, p)
			}
		}
		if len(strays) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of earlier fault-server runs still alive after %s: %+v", d, strays)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// peakRSS returns a process's peak resident set size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q", l)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

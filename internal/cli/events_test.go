package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// t0 is the fixed "now" of the tests that show relative times.
var t0 = time.Date(2026, 3, 1, 12, 4, 5, 0, time.UTC)

// stamp is how the human output shows the time of an event.
func stamp(t time.Time) string { return t.Local().Format(time.TimeOnly) }

// sseEvent writes ev as the daemon does: its type as the event name, the
// JSON on one data line.
func sseEvent(t *testing.T, w io.Writer, ev apitype.Event) {
	t.Helper()
	data, err := json.Marshal(ev)
	if err != nil {
		t.Error(err)
		return
	}
	if _, err := w.Write(sse.AppendData(nil, ev.Type, "", data)); err != nil {
		return // the client went away
	}
	w.(http.Flusher).Flush()
}

// streamThen serves events after a keep-alive, then ends the stream (hold
// false: the daemon went away) or holds it open until the client goes.
func streamThen(t *testing.T, hold bool, events ...apitype.Event) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, ": keep-alive\n\n")
		w.(http.Flusher).Flush()
		for _, ev := range events {
			sseEvent(t, w, ev)
		}
		if hold {
			<-r.Context().Done()
		}
	}
}

// followed is the story that the logs -f tests stream about server docs.
func followed() []apitype.Event {
	next := t0.Add(4 * time.Second)
	return []apitype.Event{
		// Already in the lines read (lineSeq < nextSeq): not printed twice.
		{Seq: 5, Type: apitype.EventStderr, Time: t0, Server: "docs", Line: "listening", LineSeq: 1},
		{Seq: 6, Type: apitype.EventStderr, Time: t0, Server: "other", Line: "not docs", LineSeq: 7},
		{Seq: 7, Type: apitype.EventStderr, Time: t0, Server: "docs", Line: "panic: \x1b[31mboom", LineSeq: 6},
		{Seq: 8, Type: apitype.EventServer, Time: t0, Server: "docs", Status: &apitype.ServerStatus{
			Name: "docs", State: apitype.StateBackoff, LastError: "connection lost: EOF\nmore", NextTryAt: &next, Restarts: 1}},
		{Seq: 9, Type: apitype.EventCatalog, Time: t0},
		{Seq: 10, Type: apitype.EventServer, Time: t0.Add(5 * time.Second), Server: "docs", Status: &apitype.ServerStatus{
			Name: "docs", State: apitype.StateReady, Tools: 4, Restarts: 1}},
		{Seq: 11, Type: apitype.EventStderr, Time: t0, Server: "docs", Line: "listening", LineSeq: 7},
	}
}

const docsLogs = `{"server":"docs","lines":["starting","listening"],"nextSeq":2}`

func TestLogs(t *testing.T) {
	startFake(t, map[string]reply{
		"GET /v1/servers/docs/logs": {200, `{"server":"docs","lines":["a \u001b[2Jb","tab\there","cr\r\nlf"],"nextSeq":3}`},
		"GET /v1/servers/none/logs": {200, `{"server":"none","lines":null,"nextSeq":0}`},
		"GET /v1/servers/nope/logs": {404, `{"error":{"code":"not_found","message":"no server named \"nope\""}}`},
	})
	if r := run(t, "", "logs", "docs"); r.code != 0 || r.stdout != "a [2Jb\ntab\there\ncr lf\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r := run(t, "", "logs", "docs", "--json")
	var ll apitype.LogLines
	if err := json.Unmarshal([]byte(r.stdout), &ll); err != nil || ll.NextSeq != 3 || ll.Lines[0] != "a \x1b[2Jb" {
		t.Errorf("--json: %v %q", err, r.stdout)
	}
	if r := run(t, "", "logs", "none", "--json"); !strings.Contains(r.stdout, `"lines": []`) {
		t.Errorf("no lines: %q", r.stdout)
	}
	want := "plexus: reading the stderr of nope: no server named \"nope\": see `plexus ls` for the configured servers\n"
	if r := run(t, "", "logs", "nope"); r.code != ExitError || r.stderr != want {
		t.Errorf("unknown server: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestLogsFollow(t *testing.T) {
	removed := apitype.Event{Seq: 12, Type: apitype.EventServerRemoved, Time: t0, Server: "docs"}
	f := startFakeStreams(t,
		map[string]reply{"GET /v1/servers/docs/logs": {200, docsLogs}},
		map[string]http.HandlerFunc{"GET /v1/events": streamThen(t, true, append(followed(), removed)...)})
	r := runAt(t, t0, "logs", "docs", "-f")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if want := "starting\nlistening\npanic: [31mboom\nlistening\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	want := "-- docs is backoff (next try in 4s): connection lost: EOF\n" +
		"-- docs is ready, 4 tools\n" +
		"-- docs was removed: nothing more to follow\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	// Subscribed first, then read: no line falls between the two.
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) != 2 || f.reqs[0].uri != "/v1/events" || f.reqs[1].uri != "/v1/servers/docs/logs" {
		t.Errorf("requests %+v, want the events first", f.reqs)
	}
}

func TestLogsFollowJSON(t *testing.T) {
	removed := apitype.Event{Seq: 12, Type: apitype.EventServerRemoved, Time: t0, Server: "docs"}
	startFakeStreams(t,
		map[string]reply{"GET /v1/servers/docs/logs": {200, docsLogs}},
		map[string]http.HandlerFunc{"GET /v1/events": streamThen(t, true, append(followed(), removed)...)})
	r := runAt(t, t0, "logs", "docs", "-f", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var got []apitype.Event
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev apitype.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, ev)
	}
	var seqs []int64
	for _, ev := range got {
		if ev.Server != "docs" {
			t.Errorf("event about %q", ev.Server)
		}
		seqs = append(seqs, ev.Seq)
	}
	// The two lines read first (seq 0), then 7, 8, 10, 11 and the removal.
	if want := []int64{0, 0, 7, 8, 10, 11, 12}; !equalInts(seqs, want) {
		t.Fatalf("seqs %v, want %v", seqs, want)
	}
	if got[1].Type != apitype.EventStderr || got[1].Line != "listening" || got[2].Line != "panic: \x1b[31mboom" ||
		got[3].Status == nil || got[3].Status.NextTryAt == nil || got[6].Type != apitype.EventServerRemoved {
		t.Errorf("events %+v", got)
	}
	if strings.Contains(r.stdout, "\n\n") || strings.Contains(r.stdout, "  ") {
		t.Errorf("not one compact object a line:\n%s", r.stdout)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLogsFollowDaemonGone(t *testing.T) {
	startFakeStreams(t,
		map[string]reply{"GET /v1/servers/docs/logs": {200, docsLogs}},
		map[string]http.HandlerFunc{"GET /v1/events": streamThen(t, false, followed()[2])})
	r := runAt(t, t0, "logs", "docs", "--follow")
	if r.code != ExitError || r.stdout != "starting\nlistening\npanic: [31mboom\n" ||
		r.stderr != "plexus: the daemon closed the event stream: the daemon may have stopped; see `plexus status`\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// watchWriter collects output and says when it holds want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func newWatchWriter(want string) *watchWriter {
	return &watchWriter{want: want, seen: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.want != "" && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.want = ""
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runUntilInterrupted runs the CLI until its stdout holds want, then
// interrupts it as Ctrl-C does (main cancels the context).
func runUntilInterrupted(t *testing.T, want string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := newWatchWriter(want)
	var errOut bytes.Buffer
	a := &app{env: Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errOut}, clock: func() time.Time { return t0 }}
	done := make(chan int)
	go func() { done <- a.run(ctx, args) }()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("ended before printing %q: exit %d, stdout %q, stderr %q", want, code, out.String(), errOut.String())
	}
	cancel()
	code := <-done
	return result{code, out.String(), errOut.String()}
}

func TestLogsFollowInterrupted(t *testing.T) {
	startFakeStreams(t,
		map[string]reply{"GET /v1/servers/docs/logs": {200, docsLogs}},
		map[string]http.HandlerFunc{"GET /v1/events": streamThen(t, true, followed()...)})
	r := runUntilInterrupted(t, "panic: [31mboom\nlistening\n", "logs", "docs", "-f")
	if r.code != 0 || r.stdout != "starting\nlistening\npanic: [31mboom\nlistening\n" || strings.Contains(r.stderr, "plexus:") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestEventsCommand(t *testing.T) {
	events := append(followed(),
		apitype.Event{Seq: 12, Type: apitype.EventServer, Time: t0, Server: "gh", Status: &apitype.ServerStatus{
			Name: "gh", State: apitype.StateFailed, CrashLooping: true, LastError: "exit status 1", NextTryAt: new(t0.Add(9 * time.Minute))}},
		apitype.Event{Seq: 13, Type: apitype.EventServerRemoved, Time: t0, Server: "docs"},
		apitype.Event{Seq: 14, Type: "hologram", Time: t0},
	)
	startFakeStreams(t, nil, map[string]http.HandlerFunc{"GET /v1/events": streamThen(t, true, events...)})
	s := stamp(t0)
	want := s + " docs stderr: listening\n" +
		s + " other stderr: not docs\n" +
		s + " docs stderr: panic: [31mboom\n" +
		s + " server docs: backoff (next try in 4s): connection lost: EOF\n" +
		s + " catalog changed\n" +
		stamp(t0.Add(5*time.Second)) + " server docs: ready, 4 tools\n" +
		s + " docs stderr: listening\n" +
		s + " server gh: crash-looping (next try in 9m): exit status 1\n" +
		s + " server docs removed\n" +
		s + " hologram\n"
	r := runUntilInterrupted(t, s+" hologram\n", "events")
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}

	r = runUntilInterrupted(t, `"type":"hologram"`, "events", "--json")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != len(events) {
		t.Fatalf("exit %d, %d lines:\n%s", r.code, len(lines), r.stdout)
	}
	for i, line := range lines {
		var ev apitype.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Seq != events[i].Seq || ev.Type != events[i].Type || !ev.Time.Equal(events[i].Time) {
			t.Errorf("line %d: %q, %v", i, line, err)
		}
	}
}

func TestEventsDaemonGone(t *testing.T) {
	startFakeStreams(t, nil, map[string]http.HandlerFunc{"GET /v1/events": streamThen(t, false,
		apitype.Event{Seq: 1, Type: apitype.EventCatalog, Time: t0})})
	r := run(t, "", "events")
	if r.code != ExitError || r.stdout != stamp(t0)+" catalog changed\n" || !strings.Contains(r.stderr, "the daemon closed the event stream") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestEventsOldDaemon(t *testing.T) {
	startFake(t, nil)
	r := run(t, "", "events")
	if r.code != ExitError || !strings.Contains(r.stderr, "it is older than this plexus") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestReload(t *testing.T) {
	startFake(t, map[string]reply{"POST /v1/reload": {200, `{"revision":12}`}})
	if r := run(t, "", "reload"); r.code != 0 || r.stdout != "reloaded (revision 12)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestReloadProblems(t *testing.T) {
	startFake(t, map[string]reply{"POST /v1/reload": {400, `{"error":{"code":"bad_request","message":"invalid settings","problems":[
		{"path":"mcp.servers.docs.url","message":"must be https"},{"path":"mcp.servers.fs","message":"unknown key \"comand\""}]}}`}})
	r := run(t, "", "reload")
	want := "plexus: reloading the settings: invalid settings\n" +
		"  mcp.servers.docs.url: must be https\n" +
		"  mcp.servers.fs: unknown key \"comand\"\n" +
		"correct " + filepath.Join(os.Getenv("PLEXUS_HOME"), "extensions.json") +
		" and run `plexus reload` again; until then the servers keep the settings they had\n"
	if r.code != ExitError || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr\n%q\nwant\n%q", r.code, r.stdout, r.stderr, want)
	}
}

func TestRestart(t *testing.T) {
	startFake(t, map[string]reply{
		"POST /v1/servers/docs/restart": {200, `{"revision":3,"server":{"name":"docs","state":"ready","tools":2,"warnings":["slow start"]}}`},
		"POST /v1/servers/fs/restart":   {200, `{"revision":3,"server":{"name":"fs","state":"backoff","lastError":"exit status 1"}}`},
		"POST /v1/servers/nope/restart": {404, `{"error":{"code":"not_found","message":"no server named \"nope\""}}`},
	})
	if r := run(t, "", "restart", "docs"); r.code != 0 || r.stdout != "restarted docs (ready, 2 tools)\n" || r.stderr != "warning: slow start\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "restart", "fs"); r.code != 0 || r.stdout != "restarted fs (backoff: exit status 1)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	want := "plexus: restarting nope: no server named \"nope\": see `plexus ls` for the configured servers\n"
	if r := run(t, "", "restart", "nope"); r.code != ExitError || r.stderr != want {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// troubledJSON has a server of every kind of trouble, as of t0.
const troubledJSON = `[
	{"name":"docs","type":"stdio","enabled":true,"state":"ready","tools":4},
	{"name":"fs","type":"stdio","enabled":true,"state":"backoff","lastError":"exit status 2","exitCode":2,"restarts":3,
		"nextTryAt":"2026-03-01T12:04:09.4Z","stderr":["one","two","three","panic: \u001b[2Jboom"]},
	{"name":"search","type":"http","enabled":true,"state":"failed","lastError":"401 Unauthorized\nWWW-Authenticate: Bearer","httpStatus":401},
	{"name":"gh","type":"stdio","enabled":true,"state":"failed","crashLooping":true,"lastError":"exit status 1","exitCode":1,"restarts":5,
		"nextTryAt":"2026-03-01T12:13:05Z"},
	{"name":"late","type":"stdio","enabled":true,"state":"backoff","nextTryAt":"2026-03-01T12:00:00Z"}]`

func TestLsStates(t *testing.T) {
	startFake(t, map[string]reply{"GET /v1/servers": {200, `{"revision":3,"servers":` + troubledJSON + `}`}})
	r := runAt(t, t0, "ls")
	want := "NAME    STATE             TYPE   TOOLS  ERROR\n" +
		"docs    ready             stdio  4\n" +
		"fs      backoff 4s        stdio  0      exit status 2\n" +
		"search  unauthorized      http   0      401 Unauthorized\n" +
		"gh      crash-looping 9m  stdio  0      exit status 1\n" +
		"late    backoff 0s        stdio  0\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
	// --json is the statuses as the daemon sent them.
	r = runAt(t, t0, "ls", "--json")
	var got []apitype.ServerStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 5 || got[1].Restarts != 3 || got[1].NextTryAt == nil ||
		!got[3].CrashLooping || got[2].HTTPStatus != 401 || len(got[1].Stderr) != 4 {
		t.Errorf("ls --json: %v\n%s", err, r.stdout)
	}
}

func TestStatusTroubles(t *testing.T) {
	startFake(t, map[string]reply{"GET /v1/status": {200, `{"version":"0.2.0","pid":7,"home":"/h","startedAt":"2026-03-01T10:34:05Z","revision":4,
		"servers":` + troubledJSON + `}`}})
	r := runAt(t, t0, "status")
	want := "daemon    running, pid 7, version 0.2.0\nhome      /h\nuptime    1h30m0s\nrevision  4\n\n" +
		"NAME    STATE             TYPE   TOOLS  ERROR\n" +
		"docs    ready             stdio  4\n" +
		"fs      backoff 4s        stdio  0      exit status 2\n" +
		"search  unauthorized      http   0      401 Unauthorized\n" +
		"gh      crash-looping 9m  stdio  0      exit status 1\n" +
		"late    backoff 0s        stdio  0\n" +
		"\n" +
		"fs: backoff 4s\n" +
		"  error        exit status 2\n" +
		"  exit code    2\n" +
		"  restarts     3\n" +
		"  last stderr (all of it: plexus logs fs)\n" +
		"    two\n" +
		"    three\n" +
		"    panic: [2Jboom\n" +
		"\n" +
		"search: unauthorized\n" +
		"  error        401 Unauthorized\n" +
		"               WWW-Authenticate: Bearer\n" +
		"  HTTP status  401\n" +
		"  restarts     0\n" +
		"\n" +
		"gh: crash-looping 9m\n" +
		"  error        exit status 1\n" +
		"  exit code    1\n" +
		"  restarts     5\n" +
		"\n" +
		"late: backoff 0s\n" +
		"  restarts     0\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
}

func TestShortDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Hour, "0s"},
		{0, "0s"},
		{400 * time.Millisecond, "0s"},
		{4400 * time.Millisecond, "4s"},
		{59499 * time.Millisecond, "59s"},
		{59500 * time.Millisecond, "1m"},
		{9*time.Minute + 29*time.Second, "9m"},
		{59*time.Minute + 31*time.Second, "1h"},
		{90 * time.Minute, "1h30m"},
		{26 * time.Hour, "26h"},
	} {
		if got := shortDuration(tc.d); got != tc.want {
			t.Errorf("shortDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

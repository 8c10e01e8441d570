package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Workload is what Run does once its sessions are open.
type Workload struct {
	Tool string // the tool to call: its exact name, or its upstream name behind Plexus
	// Server, if set, is the Plexus server whose Tool is meant, when
	// several servers offer a tool of that name.
	Server      string
	Args        json.RawMessage // its arguments, a JSON object
	Calls       int             // measured calls, in all
	Concurrency int             // callers at once
	Sessions    int             // sessions the callers share, round robin
	// Warmup calls are made first and not measured; -1 means none, 0 a
	// default (a tenth of Calls, at least 10 and at most 200).
	Warmup int
	// CallTimeout bounds each call; 0 means 30 s. A call that runs out
	// counts as an error: nothing is left stalled.
	CallTimeout time.Duration
	// PID, if not 0, is a process whose RSS and CPU time are read before
	// and after the measured calls (the daemon, say).
	PID int
}

func (w *Workload) defaults() error {
	if w.Tool == "" {
		return errors.New("no tool to call")
	}
	if len(w.Args) == 0 {
		w.Args = json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(w.Args, &obj); err != nil || obj == nil {
		return fmt.Errorf("the tool's arguments must be a JSON object: %s", w.Args)
	}
	if w.Calls < 0 || w.Concurrency < 0 || w.Sessions < 0 {
		return errors.New("calls, concurrency and sessions cannot be negative")
	}
	w.Concurrency = max(w.Concurrency, 1)
	w.Sessions = max(w.Sessions, 1)
	if w.Warmup == 0 {
		w.Warmup = min(max(w.Calls/10, 10), 200)
	}
	w.Warmup = max(w.Warmup, 0)
	if w.CallTimeout <= 0 {
		w.CallTimeout = 30 * time.Second
	}
	return nil
}

// Result is what Run measured. Times are in microseconds.
type Result struct {
	Target      string  `json:"target"`
	Client      string  `json:"client"`   // sdk or raw
	Protocol    string  `json:"protocol"` // as negotiated
	Sessions    int     `json:"sessions"`
	Concurrency int     `json:"concurrency"`
	HandshakeUs float64 `json:"handshakeUs"` // median over the sessions
	ListUs      float64 `json:"listUs"`      // every page of tools/list, first session
	Tools       int     `json:"tools"`
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"firstError,omitempty"`
	Latency
	CallsPerSec float64     `json:"callsPerSec"`
	ElapsedMs   float64     `json:"elapsedMs"`
	Proc        *ProcResult `json:"proc,omitempty"`
	// StdioProc is what the stdio command did during the measured calls
	// (every session's, summed; Linux only): for `plexus mcp`, the
	// bridge's own CPU, which Proc (the daemon's) does not hold.
	StdioProc *ProcResult `json:"stdioProc,omitempty"`
}

// ProcResult is what the watched process did during the measured calls.
type ProcResult struct {
	PID          int     `json:"pid"`
	RSSBefore    int64   `json:"rssBeforeBytes"`
	RSSAfter     int64   `json:"rssAfterBytes"`
	CPUUs        float64 `json:"cpuUs"`
	CPUPerCallUs float64 `json:"cpuPerCallUs"`
}

// Run opens w.Sessions sessions to t, lists the tools, and makes w.Calls
// calls of w.Tool from w.Concurrency callers.
func Run(ctx context.Context, t Target, w Workload) (*Result, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	if err := w.defaults(); err != nil {
		return nil, err
	}
	hc := httpClient(t.Header, w.Concurrency)
	defer hc.CloseIdleConnections()

	sessions, handshakes, err := openSessions(ctx, t, hc, w.Sessions, (w.Concurrency+w.Sessions-1)/w.Sessions)
	defer closeAll(sessions)
	if err != nil {
		return nil, err
	}
	r := &Result{Target: t.String(), Client: t.Client, Sessions: w.Sessions, Concurrency: w.Concurrency, HandshakeUs: median(handshakes)}
	if r.Client == "" {
		r.Client = ClientSDK
	}
	r.Protocol = sessions[0].protocol()
	start := time.Now()
	tools, err := sessions[0].tools(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools/list on %s: %w", t, err)
	}
	r.ListUs, r.Tools = us(time.Since(start)), len(tools)
	name, err := resolveTool(tools, w.Tool, w.Server)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	params := toolCall{name, w.Args}

	if w.Warmup > 0 {
		if wr := callMany(ctx, sessions, params, w.Warmup, w.Concurrency, w.CallTimeout); wr.errors == w.Warmup {
			return nil, fmt.Errorf("calling %s on %s: every warm-up call failed: %s", name, t, wr.firstError)
		}
	}
	var before Proc
	if w.PID != 0 {
		if before, err = ReadProc(w.PID); err != nil {
			return nil, err
		}
	}
	stdioBefore, stdioOK := readProcs(sessions)
	cr := callMany(ctx, sessions, params, w.Calls, w.Concurrency, w.CallTimeout)
	if after, ok := readProcs(sessions); ok && stdioOK {
		cpu := us(after.CPU - stdioBefore.CPU)
		r.StdioProc = &ProcResult{PID: sessions[0].pid(), RSSBefore: stdioBefore.RSS, RSSAfter: after.RSS, CPUUs: cpu, CPUPerCallUs: cpu / float64(max(w.Calls, 1))}
	}
	if w.PID != 0 {
		after, err := ReadProc(w.PID)
		if err != nil {
			return nil, err
		}
		cpu := us(after.CPU - before.CPU)
		r.Proc = &ProcResult{PID: w.PID, RSSBefore: before.RSS, RSSAfter: after.RSS, CPUUs: cpu, CPUPerCallUs: cpu / float64(max(w.Calls, 1))}
	}
	r.Calls, r.Errors, r.FirstError = w.Calls, cr.errors, cr.firstError
	r.Latency = summarise(cr.latencies)
	r.ElapsedMs = float64(cr.elapsed.Microseconds()) / 1e3
	if cr.elapsed > 0 {
		r.CallsPerSec = float64(w.Calls) / cr.elapsed.Seconds()
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	return r, nil
}

// readProcs sums ReadProc over the sessions' stdio commands; false for a
// URL, or where /proc cannot be read.
func readProcs(sessions []session) (Proc, bool) {
	var sum Proc
	for _, s := range sessions {
		if s.pid() == 0 {
			return Proc{}, false
		}
		p, err := ReadProc(s.pid())
		if err != nil {
			return Proc{}, false
		}
		sum.RSS += p.RSS
		sum.CPU += p.CPU
	}
	return sum, len(sessions) > 0
}

// openSessions connects n sessions in turn (a handshake each, measured
// alone), each for conns callers at once; on error it returns the sessions
// opened so far, for closing.
func openSessions(ctx context.Context, t Target, hc *http.Client, n, conns int) ([]session, []float64, error) {
	var sessions []session
	var handshakes []float64
	for range n {
		cs, d, err := t.open(ctx, hc, conns)
		if err != nil {
			return sessions, nil, err
		}
		sessions = append(sessions, cs)
		handshakes = append(handshakes, us(d))
	}
	return sessions, handshakes, nil
}

func closeAll(sessions []session) {
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() { cs.close() })
	}
	wg.Wait()
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// resolveTool finds want among the listed tools: by its exact name, else
// as the upstream name in a Plexus name — server_tool, perhaps with a short
// suffix, or the hashed mcp_<server>_<tool>_<hash> — when exactly one tool
// has it, of server if that is not "".
func resolveTool(tools []string, want, server string) (string, error) {
	var found []string
	for _, name := range tools {
		if name == want {
			return want, nil
		}
		if server != "" && !strings.HasPrefix(name, server+"_") && !strings.HasPrefix(name, "mcp_"+server+"_") {
			continue
		}
		base := name
		if i := strings.LastIndexByte(name, '_'); i > 0 && !strings.HasSuffix(name, "_"+want) {
			base = name[:i] // a suffix
		}
		if strings.HasSuffix(base, "_"+want) {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no tool %q among its %d tools", want, len(tools))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("tool %q is ambiguous: %s; give the full name", want, strings.Join(found, ", "))
}

type calls struct {
	latencies  []time.Duration
	errors     int
	firstError string
	elapsed    time.Duration
}

// callMany makes n calls from c callers; caller i uses session i mod S.
// toolCall is the call a run makes.
type toolCall struct {
	name string
	args json.RawMessage
}

func callMany(ctx context.Context, sessions []session, params toolCall, n, c int, timeout time.Duration) calls {
	res := calls{latencies: make([]time.Duration, n)}
	var next atomic.Int64
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if res.errors == 0 {
			res.firstError = err.Error()
		}
		res.errors++
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c {
		cs := sessions[i%len(sessions)]
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= n || ctx.Err() != nil {
					return
				}
				cctx, cancel := context.WithTimeout(ctx, timeout)
				t0 := time.Now()
				err := cs.call(cctx, params.name, params.args)
				res.latencies[k] = time.Since(t0)
				cancel()
				if err != nil {
					fail(err)
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plexus-mcp/plexus/internal/rawhttp"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// The raw client (--client raw) speaks MCP 2026-07-28 with the least work a
// client can do: each request is written as bytes with the protocol's
// _meta, and of an answer only the id, an error and isError are decoded.
// Used on both legs of a comparison it measures what the endpoint adds,
// not what the SDK's client costs (an HTTP client in the SDK costs more
// than its stdio client, which would count against the gateway).

const maxAnswer = 64 << 20

// rawMeta is the _meta of every raw request.
const rawMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + Protocol2026 +
	`","io.modelcontextprotocol/clientInfo":{"name":"plexus-load","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// rawRequest encodes a request: params is a JSON object's members without
// its braces ("" for none).
func rawRequest(id int64, method, params string) []byte {
	b := make([]byte, 0, 256+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":{`...)
	if params != "" {
		b = append(b, params...)
		b = append(b, ',')
	}
	b = append(b, rawMeta...)
	return append(b, "}}"...)
}

// rawAnswer is what the raw client reads of an answer.
type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (a *rawAnswer) err() error {
	if a.Error != nil {
		return fmt.Errorf("error %d: %s", a.Error.Code, a.Error.Message)
	}
	var r struct {
		IsError    bool   `json:"isError"`
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(a.Result, &r) != nil {
		return fmt.Errorf("an answer without a result object: %.200s", a.Result)
	}
	if r.IsError {
		return fmt.Errorf("the tool answered with an error: %.300s", a.Result)
	}
	if r.ResultType != "" && r.ResultType != "complete" {
		return fmt.Errorf("the tool answered %q, which the raw client cannot continue", r.ResultType)
	}
	return nil
}

// rawTools lists every page of tools with the raw client.
func rawTools(ctx context.Context, send func(ctx context.Context, method, name, params string) (*rawAnswer, error)) ([]string, error) {
	var names []string
	cursor := ""
	for {
		params := ""
		if cursor != "" {
			c, _ := json.Marshal(cursor)
			params = `"cursor":` + string(c)
		}
		a, err := send(ctx, "tools/list", "", params)
		if err != nil {
			return nil, err
		}
		if a.Error != nil {
			return nil, a.err()
		}
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(a.Result, &page); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range page.Tools {
			names = append(names, t.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			return names, nil
		}
	}
}

// rawSessionOf makes a session of a raw client's send.
type rawSessionOf struct {
	send    func(ctx context.Context, method, name, params string) (*rawAnswer, error)
	closeFn func() error
	procID  int // the stdio command's process; 0 for a URL
}

func (s rawSessionOf) pid() int { return s.procID }

func (s rawSessionOf) protocol() string { return Protocol2026 }

func (s rawSessionOf) tools(ctx context.Context) ([]string, error) { return rawTools(ctx, s.send) }

func (s rawSessionOf) call(ctx context.Context, name string, args json.RawMessage) error {
	n, _ := json.Marshal(name)
	a, err := s.send(ctx, "tools/call", name, `"name":`+string(n)+`,"arguments":`+string(args))
	if err != nil {
		return err
	}
	return a.err()
}

func (s rawSessionOf) close() error { return s.closeFn() }

// rawStdio is a raw client of a stdio server it starts.
type rawStdio struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	wmu   sync.Mutex
	seq   atomic.Int64

	mu      sync.Mutex
	pending map[string]chan *rawAnswer
	done    chan struct{}
	readErr error
}

func dialRawStdio(ctx context.Context, t Target) (*rawStdio, error) {
	cmd := exec.Command(t.Stdio[0], t.Stdio[1:]...)
	cmd.Env = append(os.Environ(), t.Env...)
	cmd.Stderr = t.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", t, err)
	}
	s := &rawStdio{cmd: cmd, stdin: in, pending: map[string]chan *rawAnswer{}, done: make(chan struct{})}
	go s.read(out)
	return s, nil
}

func (s *rawStdio) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), maxAnswer)
	for sc.Scan() {
		var a rawAnswer
		if json.Unmarshal(sc.Bytes(), &a) != nil || len(a.ID) == 0 {
			continue // a notification, or a request the raw client does not answer
		}
		s.mu.Lock()
		ch := s.pending[string(a.ID)]
		delete(s.pending, string(a.ID))
		s.mu.Unlock()
		if ch != nil {
			ch <- &a
		}
	}
	s.readErr = sc.Err()
	if s.readErr == nil {
		s.readErr = errors.New("the server closed its stdout")
	}
	close(s.done)
}

func (s *rawStdio) send(ctx context.Context, method, _ string, params string) (*rawAnswer, error) {
	id := s.seq.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan *rawAnswer, 1)
	s.mu.Lock()
	s.pending[key] = ch
	s.mu.Unlock()
	frame := append(rawRequest(id, method, params), '\n')
	s.wmu.Lock()
	_, err := s.stdin.Write(frame)
	s.wmu.Unlock()
	if err == nil {
		select {
		case a := <-ch:
			return a, nil
		case <-ctx.Done():
			err = ctx.Err()
		case <-s.done:
			err = s.readErr
		}
	}
	s.mu.Lock()
	delete(s.pending, key)
	s.mu.Unlock()
	return nil, err
}

func (s *rawStdio) close() error {
	s.stdin.Close()
	t := time.AfterFunc(2*time.Second, func() { s.cmd.Process.Kill() })
	defer t.Stop()
	return s.cmd.Wait()
}

// rawHTTP is a raw client of a streamable HTTP endpoint: every request a
// POST of its own, as MCP 2026-07-28 allows, made in the caller's
// goroutine on a kept-alive connection (rawhttp). Plain http:// only: it
// is for endpoints on this machine.
type rawHTTP struct {
	path   string
	header http.Header
	cl     *rawhttp.Client
	seq    atomic.Int64
}

func newRawHTTP(endpoint string, header http.Header, conns int) (*rawHTTP, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the raw client takes an http:// URL, not %q", endpoint)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	var d net.Dialer
	dial := func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	return &rawHTTP{path: u.RequestURI(), header: header, cl: &rawhttp.Client{Dial: dial, Host: u.Host, MaxIdle: max(conns, 1)}}, nil
}

func (s *rawHTTP) send(ctx context.Context, method, name, params string) (*rawAnswer, error) {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {Protocol2026}, "Mcp-Method": {method}}
	if name != "" {
		h["Mcp-Name"] = []string{name}
	}
	for k, vs := range s.header {
		h[k] = vs
	}
	resp, err := s.cl.Do(ctx, http.MethodPost, s.path, h, rawRequest(s.seq.Add(1), method, params))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	var data []byte
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		data, err = lastEvent(resp.Body)
	} else {
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	var a rawAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d, not a JSON-RPC answer: %.200s", method, resp.StatusCode, data)
	}
	return &a, nil
}

// lastEvent reads an event stream to its answer: the message with an id.
func lastEvent(r io.Reader) ([]byte, error) {
	er := sse.NewReader(r, maxAnswer)
	for {
		ev, err := er.Next()
		if err != nil {
			return nil, err
		}
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(ev.Data), &probe) == nil && len(probe.ID) > 0 {
			return []byte(ev.Data), nil
		}
	}
}

func (s *rawHTTP) close() error {
	s.cl.CloseIdle()
	return nil
}

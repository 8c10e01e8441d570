package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/rawio"
)

// maxFrameSize bounds one message from a server: twice the SDK's own
// stdio transport's bound (mcp.DefaultMaxLineLength), so that a result of
// 20 MiB and more reaches the host, which keeps what is over its
// server's maxResultBytes as a resource (host/results.go).
const maxFrameSize = 2 * mcp.DefaultMaxLineLength

// methodDiscover is the stateless probe of MCP 2026-07-28.
const methodDiscover = "server/discover"

// errStdoutClosed is the read error when the server closes its stdout.
var errStdoutClosed = errors.New("server closed its stdout")

// stdioConn is an mcp.Connection over a server's stdin and stdout:
// newline-delimited JSON-RPC, as mcp.IOTransport speaks it, with two changes
// that the SDK does not offer:
//
//   - A server/discover request that gets no answer within discoverTimeout is
//     answered here with "method not found", so that the SDK falls back to
//     initialize on the same connection. The SDK waits forever, and a server
//     of an older protocol version may well ignore a method it does not know.
//   - A stdout line that is not JSON-RPC (a banner, a stray log line) is
//     reported through onGarbage and skipped instead of breaking the session.
//     The MCP stdio transport says "The server MUST NOT write anything to its
//     stdout that is not a valid MCP message", but servers do, and a session
//     need not die of a banner.
type stdioConn struct {
	w  *os.File         // server's stdin
	wr *rawio.NowWriter // w's, for a write that must not wait (writeFrame); nil: none
	r  *os.File         // server's stdout
	br *bufio.Reader

	discoverTimeout time.Duration
	onGarbage       func(line []byte)

	writeMu sync.Mutex // serialises frames on w

	incoming chan jsonrpc.Message // from the read loop
	injected chan jsonrpc.Message // synthesized answers to expired probes
	readDone chan struct{}        // closed when the read loop ends; readErr is set before
	readErr  error

	mu      sync.Mutex
	probes  map[jsonrpc.ID]*time.Timer // guarded by mu; unanswered server/discover calls
	expired map[jsonrpc.ID]bool        // guarded by mu; probes answered here, whose late answer is dropped
	// probeWritten holds the probes wholly written to the server's stdin;
	// guarded by mu.
	probeWritten map[jsonrpc.ID]bool

	closeOnce sync.Once
	closed    chan struct{}

	// frames, once set, takes the answers to frame calls (frame.go) in the
	// read loop, a hand-off shorter than through Read.
	frames atomic.Pointer[frameCalls]
	// route, once set, takes the server's requests and progress and log
	// notifications in the read loop (routeconn.go), in the order they
	// came with the answers frames takes: a call's last progress
	// notification reaches its caller before the call's answer does.
	route atomic.Pointer[routeConn]
	// heard is when the server last wrote a line (Conn.HeardSince).
	heard atomic.Int64
}

func newStdioConn(p pipes, discoverTimeout time.Duration, onGarbage func([]byte)) *stdioConn {
	c := &stdioConn{
		w:               p.stdin,
		wr:              nowWriter(p.stdin),
		r:               p.stdout,
		br:              bufio.NewReaderSize(rawio.File(p.stdout), 64<<10), // raw reads on Linux: no wake-up of the runtime's monitor
		discoverTimeout: discoverTimeout,
		onGarbage:       onGarbage,
		incoming:        make(chan jsonrpc.Message),
		injected:        make(chan jsonrpc.Message, 4),
		readDone:        make(chan struct{}),
		probes:          map[jsonrpc.ID]*time.Timer{},
		expired:         map[jsonrpc.ID]bool{},
		probeWritten:    map[jsonrpc.ID]bool{},
		closed:          make(chan struct{}),
	}
	go c.readLoop()
	return c
}

func (c *stdioConn) SessionID() string { return "" }

// Read implements mcp.Connection. The SDK reads from a single goroutine.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.injected:
		return m, nil
	case m := <-c.incoming:
		return m, nil
	case <-c.readDone:
		return nil, c.readErr
	case <-c.closed:
		return nil, mcp.ErrConnectionClosed
	}
}

func (c *stdioConn) readLoop() {
	var err error
	defer func() {
		c.readErr = err
		close(c.readDone)
	}()
	for {
		var line []byte
		line, err = readFrame(c.br)
		if len(line) > 0 {
			c.heard.Store(time.Now().UnixNano())
		}
		if f := c.frames.Load(); f != nil && f.deliverFrame(line) {
			// an answer to a frame call, handed over undecoded
		} else if msgs, ok := decodeFrame(line); ok {
			for _, m := range msgs {
				if req, isReq := m.(*jsonrpc.Request); isReq {
					if rc := c.route.Load(); rc != nil && rc.handle(context.Background(), req) {
						continue
					}
				}
				if !c.deliver(m) {
					err = mcp.ErrConnectionClosed
					return
				}
			}
		} else if len(bytes.TrimSpace(line)) > 0 {
			c.onGarbage(line)
		}
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				err = mcp.ErrConnectionClosed
			} else if errors.Is(err, io.EOF) {
				err = errStdoutClosed
			}
			return
		}
	}
}

// deliver hands m to Read, settling probes on the way; an answer to a frame
// call goes straight to its caller from here.
func (c *stdioConn) deliver(m jsonrpc.Message) bool {
	if resp, ok := m.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		if f := c.frames.Load(); f != nil && f.deliver(resp) {
			return true
		}
		c.mu.Lock()
		if c.expired[resp.ID] {
			// Answered already (by us, after the timeout); the SDK has moved on.
			delete(c.expired, resp.ID)
			c.mu.Unlock()
			return true
		}
		if t, ok := c.probes[resp.ID]; ok {
			t.Stop()
			delete(c.probes, resp.ID)
			delete(c.probeWritten, resp.ID)
		}
		c.mu.Unlock()
	}
	select {
	case c.incoming <- m:
		return true
	case <-c.closed:
		return false
	}
}

// streamError is why the read loop ended, if it ended for a reason of its
// own (a message over the size limit) rather than because stdout closed or
// the connection was closed; nil otherwise, or while it still runs.
func (c *stdioConn) streamError() error {
	select {
	case <-c.readDone:
	default:
		return nil
	}
	err := c.readErr
	if err == nil || errors.Is(err, errStdoutClosed) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// stdoutClosed reports whether the read loop ended because the server
// closed its stdout.
func (c *stdioConn) stdoutClosed() bool {
	select {
	case <-c.readDone:
		return errors.Is(c.readErr, errStdoutClosed)
	default:
		return false
	}
}

// readFrame reads one line of at most maxFrameSize bytes.
func readFrame(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxFrameSize {
			return nil, fmt.Errorf("server sent a message larger than %d bytes", maxFrameSize)
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// Write implements mcp.Connection. It honours ctx even when the server has
// stopped reading its stdin and the pipe is full.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	data = append(data, '\n')
	req, probe := msg.(*jsonrpc.Request)
	probe = probe && req.Method == methodDiscover && req.IsCall()
	if probe {
		c.armProbe(req.ID)
	}
	if err := c.writeFrame(ctx, data, time.Time{}); err != nil {
		return err
	}
	if probe {
		c.probeSent(req.ID)
	}
	return nil
}

// writeFrame writes one encoded frame, ending in a newline. The pipe
// almost always has room for it: it is written at once, with no watch on
// ctx (context.AfterFunc, a deadline, was ~1 % of the daemon's CPU at 16
// callers). What the pipe does not take at once is written watching ctx
// and deadline (zero: none), past which the error is ErrTimedOut.
func (c *stdioConn) writeFrame(ctx context.Context, data []byte, deadline time.Time) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	wrote := 0
	if c.wr != nil && ctx.Err() == nil {
		if wrote = c.wr.Write(data); wrote == len(data) { // under writeMu
			return nil
		}
	}
	if deadline.IsZero() {
		return c.writeWatched(ctx, data[wrote:], wrote > 0)
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := c.writeWatched(dctx, data[wrote:], wrote > 0)
	if err != nil && ctx.Err() == nil && dctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ErrTimedOut, err)
	}
	return err
}

// writeWatched writes the rest of a frame, ending the write when ctx
// ends; torn says part of the frame is already written.
func (c *stdioConn) writeWatched(ctx context.Context, data []byte, torn bool) error {
	var (
		deadlineMu sync.Mutex
		finished   bool
	)
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			deadlineMu.Lock()
			defer deadlineMu.Unlock()
			if !finished {
				c.w.SetWriteDeadline(time.Now())
			}
		})
	}
	n, err := c.w.Write(data)
	if !stop() {
		deadlineMu.Lock()
		finished = true
		c.w.SetWriteDeadline(time.Time{})
		deadlineMu.Unlock()
	}
	if err == nil {
		return nil
	}
	if n > 0 || torn {
		// Half a frame is on the wire: the stream cannot be trusted again.
		c.Close()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("writing to server stdin: %w", err)
}

// nowWriter writes to f without waiting (writeFrame); nil if f has no
// raw connection.
func nowWriter(f *os.File) *rawio.NowWriter {
	if f == nil {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rawio.NewNowWriter(rc)
}

// probePoll is how often a probe checks whether the server has read it.
const probePoll = 25 * time.Millisecond

// armProbe starts the timer that answers an unanswered server/discover.
// The probe's time starts when the server has read it, not when it was
// written: a server that only starts reading its stdin seconds after its
// launch would otherwise get the fallback initialize right behind the
// probe, answer both, and see two initializations.
func (c *stdioConn) armProbe(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t *time.Timer
	counting := false
	t = time.AfterFunc(probePoll, func() {
		c.mu.Lock()
		_, pending := c.probes[id]
		if pending && !counting {
			if !c.probeWritten[id] || unreadBytes(c.w) > 0 {
				t.Reset(probePoll) // not read yet
				c.mu.Unlock()
				return
			}
			counting = true
			t.Reset(c.discoverTimeout)
			c.mu.Unlock()
			return
		}
		delete(c.probes, id)
		delete(c.probeWritten, id)
		if pending {
			c.expired[id] = true
		}
		c.mu.Unlock()
		if !pending {
			return
		}
		// R-PROTO-1: "Over stdio it probes with server/discover and falls back
		// to initialize on any other answer or timeout."
		resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
			Code:    jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("%s: no answer within %s of reading it", methodDiscover, c.discoverTimeout),
		}}
		select {
		case c.injected <- resp:
		case <-c.closed:
		}
	})
	c.probes[id] = t
}

// probeSent records that the probe id is on the wire: from now on an empty
// pipe means the server has read it.
func (c *stdioConn) probeSent(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.probes[id]; ok {
		c.probeWritten[id] = true
	}
}

// closeInput closes the server's stdin: the polite way to ask it to exit.
// It does not wait for writeMu: closing also unblocks a write stuck on a full
// pipe.
func (c *stdioConn) closeInput() {
	c.w.Close()
}

// Close implements mcp.Connection: both pipes are closed and the read loop is
// waited for.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.w.Close()
		c.r.Close()
		c.mu.Lock()
		for _, t := range c.probes {
			t.Stop()
		}
		c.mu.Unlock()
		<-c.readDone
	})
	return nil
}

package connlimit

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The deadlines of one request. net/http's own ReadTimeout and
// WriteTimeout cannot be used: they bound the whole request and its whole
// answer, which would cut every event stream and long call. And a read
// deadline still set once a body was read would end the request's
// context when it passed (the server reads on, in the background, to see
// the client leave), so it is cleared as soon as the body is read.

// request is the read deadline of the request its connection serves: one
// at a time, as HTTP/1.1 does (the daemon serves no HTTP/2).
type request struct {
	mu     sync.Mutex // guards the fields below
	rc     *http.ResponseController
	lim    *Limits
	body   bool // its body is still being read
	proven bool
}

// start begins a request: its body, if it has one, must come within d.
func (r *request) start(rc *http.ResponseController, lim *Limits, body, proven bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rc, r.lim, r.body, r.proven = rc, lim, body, proven
	if body {
		d := lim.BodyTimeout
		if proven {
			d = lim.ProvenBodyTimeout
		}
		rc.SetReadDeadline(time.Now().Add(d))
	}
}

// end is the end of the handler: the deadline is the server's again.
func (r *request) end() {
	r.mu.Lock()
	r.rc, r.body = nil, false
	r.mu.Unlock()
}

// prove gives the rest of the body ProvenBodyTimeout.
func (r *request) prove() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.proven && r.body {
		r.rc.SetReadDeadline(time.Now().Add(r.lim.ProvenBodyTimeout))
	}
	r.proven = true
}

// bodyRead lifts the deadline once the body is read to its end.
func (r *request) bodyRead() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.body {
		r.body = false
		r.rc.SetReadDeadline(time.Time{})
	}
}

// handler is h under the deadlines of each request.
func (l *Listener) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*conn)
		if c == nil {
			h.ServeHTTP(w, r) // not a connection of l's
			return
		}
		rc := http.NewResponseController(w)
		hasBody := r.Body != nil && r.Body != http.NoBody
		c.req.start(rc, &l.lim, hasBody, c.proven.Load())
		defer c.req.end()
		if hasBody {
			r.Body = &body{ReadCloser: r.Body, req: &c.req}
		}
		rw := &response{ResponseWriter: w, rc: rc, timeout: l.lim.WriteTimeout}
		h.ServeHTTP(rw, r)
		// For what the server writes after the handler: the end of a
		// chunked answer, what is still buffered.
		rw.arm(true)
	})
}

// body notices the end of a request's body.
type body struct {
	io.ReadCloser
	req *request
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.req.bodyRead()
	}
	return n, err
}

// response sets a write deadline before each write of the answer.
type response struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	armed   atomic.Int64 // when the deadline was last set, in Unix ns
}

// arm sets the write deadline WriteTimeout ahead: before each write, and
// not again while the last one set is most of WriteTimeout away (setting
// it costs a timer's move).
func (w *response) arm(always bool) {
	now := time.Now()
	if !always && now.UnixNano()-w.armed.Load() < int64(w.timeout/8) {
		return
	}
	w.armed.Store(now.UnixNano())
	w.rc.SetWriteDeadline(now.Add(w.timeout))
}

func (w *response) WriteHeader(code int) {
	w.arm(false)
	w.ResponseWriter.WriteHeader(code)
}

func (w *response) Write(p []byte) (int, error) {
	w.arm(false)
	return w.ResponseWriter.Write(p)
}

func (w *response) FlushError() error {
	w.arm(false)
	return w.rc.Flush()
}

func (w *response) Flush() { w.FlushError() }

// Unwrap lets http.ResponseController reach the server's writer.
func (w *response) Unwrap() http.ResponseWriter { return w.ResponseWriter }

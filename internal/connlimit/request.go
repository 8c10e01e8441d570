package connlimit

import (
	"context"
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

type requestKey struct{}

// request is one request's read deadline on its connection.
type request struct {
	rc     *http.ResponseController
	lim    *Limits
	mu     sync.Mutex // guards the fields below
	body   bool       // its body is still being read
	proven bool
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
		req := &request{rc: http.NewResponseController(w), lim: &l.lim}
		if r.Body != nil && r.Body != http.NoBody {
			req.body = true
			d := l.lim.BodyTimeout
			if c != nil && c.proven.Load() {
				d, req.proven = l.lim.ProvenBodyTimeout, true
			}
			req.rc.SetReadDeadline(time.Now().Add(d))
			r.Body = &body{ReadCloser: r.Body, req: req}
		}
		rw := &response{ResponseWriter: w, rc: req.rc, timeout: l.lim.WriteTimeout}
		h.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), requestKey{}, req)))
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

package face

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// A session-era client's POST that ends mid-call — the connection
// dropped, the editor quit — leaves a call the face must either keep for
// the client's resumption or cancel upstream: a server left waiting on a
// client that is gone would hold its call, and with it every other
// client's questions, for minutes. The SDK's session handler does not end
// a handler when its POST ends, so the face marks each POST it hands the
// SDK with a header of its own, and a handler ties its call to the life
// of the POST that carries it (tie):
//
//   - a POST whose stream named no event id cannot be resumed: its call
//     is cancelled at once;
//   - a call waiting on its client's answer (elicitation, sampling, roots)
//     is cancelled at once too: the question cannot reach anyone now;
//   - otherwise the call goes on for resumeWindow, and for as long as it
//     runs once the client resumed its stream with Last-Event-ID
//     (resume.go); a client that did not come back by then has its call
//     cancelled.

// requestHeader carries the key of a POST's life; a client's own value is
// overwritten.
const requestHeader = "Plexus-Request"

// resumeWindow is how long a call whose POST dropped waits for its
// client to resume the stream: longer than the SDK clients' first
// reconnection delays (one second for the TypeScript SDK's).
const resumeWindow = 10 * time.Second

// requestLives are the POSTs being served, by key, and the dropped ones a
// client may resume, by stream.
type requestLives struct {
	m        sync.Map // key → *requestLife
	byStream sync.Map // streamKey → *requestLife, once its stream named an id
}

// requestLife is one POST the SDK serves.
type requestLife struct {
	ctx     context.Context // the POST's
	session string
	stream  atomic.Pointer[string] // the stream its events name, once one did
	resumed atomic.Bool
	asking  atomic.Int32

	mu      sync.Mutex
	cancels []context.CancelFunc // of calls kept while the client may resume
}

// mark gives r a key and returns its life and the function that forgets
// it.
func (l *requestLives) mark(r *http.Request) (*requestLife, func()) {
	var b [12]byte
	rand.Read(b[:])
	key := hex.EncodeToString(b[:])
	r.Header.Set(requestHeader, key)
	life := &requestLife{ctx: r.Context(), session: r.Header.Get("Mcp-Session-Id")}
	l.m.Store(key, life)
	return life, func() {
		s := life.stream.Load()
		if s != nil && life.ctx.Err() != nil {
			// Dropped, resumable for as long as its call waits. The life
			// stays findable by its key too: the SDK names the stream (its
			// priming event) before it hands the request to a handler, so a
			// POST cut right after that ends before its handler calls tie,
			// which must still find the call resumable, not gone.
			k := streamKey{life.session, *s}
			time.AfterFunc(resumeWindow, func() {
				l.m.Delete(key)
				l.byStream.CompareAndDelete(k, life)
			})
			return
		}
		l.m.Delete(key)
		if s != nil { // delivered
			l.byStream.Delete(streamKey{life.session, *s})
		}
	}
}

// named notes the stream the POST's events name.
func (l *requestLives) named(life *requestLife, stream string) {
	if life.stream.CompareAndSwap(nil, &stream) && life.session != "" {
		l.byStream.Store(streamKey{life.session, stream}, life)
	}
}

// resume marks the call of a dropped POST resumed: it runs to its end.
func (l *requestLives) resume(k streamKey) {
	if v, ok := l.byStream.LoadAndDelete(k); ok {
		v.(*requestLife).resumed.Store(true)
	}
}

type lifeKey struct{}

// tie returns ctx ended also when the POST that carried the request ends
// and its client does not resume it; at once if that POST is gone already
// and named no stream to resume.
func (l *requestLives) tie(ctx context.Context, h http.Header) (context.Context, context.CancelFunc) {
	key := h.Get(requestHeader)
	if key == "" {
		return ctx, func() {}
	}
	v, ok := l.m.Load(key)
	if !ok {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx, cancel
	}
	ctx, cancel := context.WithCancel(context.WithValue(ctx, lifeKey{}, v.(*requestLife)))
	life := v.(*requestLife)
	stop := context.AfterFunc(life.ctx, func() { l.dropped(life, cancel) })
	return ctx, func() { stop(); cancel() }
}

// dropped handles the end of a POST whose call still runs.
func (l *requestLives) dropped(life *requestLife, cancel context.CancelFunc) {
	s := life.stream.Load()
	if s == nil || life.asking.Load() > 0 {
		cancel()
		return
	}
	life.mu.Lock()
	life.cancels = append(life.cancels, cancel)
	life.mu.Unlock()
	time.AfterFunc(resumeWindow, func() {
		l.byStream.CompareAndDelete(streamKey{life.session, *s}, life)
		if !life.resumed.Load() {
			cancel()
		}
	})
}

// asking marks ctx's call, of the SDK's path, as waiting on its client's
// answer (ask).
func asking(ctx context.Context) func() {
	life, _ := ctx.Value(lifeKey{}).(*requestLife)
	if life == nil {
		return func() {}
	}
	return life.ask()
}

// ask marks the call of life as waiting on its client's answer, and
// returns the function that marks the answer come. A call whose POST
// dropped and was not resumed is cancelled: the question would reach no
// one.
func (life *requestLife) ask() func() {
	life.asking.Add(1)
	if life.ctx.Err() != nil && !life.resumed.Load() {
		life.mu.Lock()
		for _, c := range life.cancels {
			c()
		}
		life.mu.Unlock()
	}
	return func() { life.asking.Add(-1) }
}

// lifeWriter is the response of a POST the SDK serves: it notes the
// stream its first event id names.
type lifeWriter struct {
	http.ResponseWriter
	lives *requestLives
	life  *requestLife
}

func (w *lifeWriter) Write(b []byte) (int, error) {
	if w.life.stream.Load() == nil {
		if stream, ok := firstEventStream(b); ok {
			w.lives.named(w.life, stream)
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w *lifeWriter) Flush() {
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (w *lifeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// firstEventStream is the stream named by the first id line of SSE bytes
// b, if one is there.
func firstEventStream(b []byte) (string, bool) {
	i := 0
	if !bytes.HasPrefix(b, []byte("id: ")) {
		if i = bytes.Index(b, []byte("\nid: ")); i < 0 {
			return "", false
		}
		i++
	}
	line := b[i+len("id: "):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	stream, _, ok := parseEventID(string(bytes.TrimSuffix(line, []byte("\r"))))
	return stream, ok
}

package face

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
)

// A client of the session era that goes away mid-call — its POST closed,
// the editor quit — must have its calls cancelled upstream at once: a
// server left waiting on that client's elicitation would hold its call,
// and with it every other client's questions, for minutes. The SDK's
// session handler does not end a handler when its POST ends (the answer
// could be resumed, were events stored: Plexus stores none). The face
// therefore marks each POST it hands the SDK with a header of its own,
// and a handler ties its call to the life of the POST that carries it.

// requestHeader carries the key of a POST's life; a client's own value is
// overwritten.
const requestHeader = "Plexus-Request"

// requestLives are the POSTs being served, by key.
type requestLives struct{ m sync.Map }

// mark gives r a key and returns the function that forgets it.
func (l *requestLives) mark(r *http.Request) func() {
	var b [12]byte
	rand.Read(b[:])
	key := hex.EncodeToString(b[:])
	r.Header.Set(requestHeader, key)
	l.m.Store(key, r.Context())
	return func() { l.m.Delete(key) }
}

// tie returns ctx ended also when the POST that carried the request ends;
// at once if that POST is gone already.
func (l *requestLives) tie(ctx context.Context, h http.Header) (context.Context, context.CancelFunc) {
	key := h.Get(requestHeader)
	if key == "" {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	v, ok := l.m.Load(key)
	if !ok {
		cancel()
		return ctx, cancel
	}
	stop := context.AfterFunc(v.(context.Context), cancel)
	return ctx, func() { stop(); cancel() }
}

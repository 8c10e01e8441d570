package face

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestExchangeDetached: a request is detached (upstream, another
// client's log message is not ambiguous with it) from the moment its POST
// drops until it is answered — not while the POST holds it.
func TestExchangeDetached(t *testing.T) {
	ex := newExchange(nil, "2025-11-25", httptest.NewRecorder(), []string{"1"}, true, http.Header{})
	if ex.detached() {
		t.Fatal("detached while its POST holds it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client dropped the POST
	ex.serve(httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(ctx))
	if !ex.detached() {
		t.Fatal("not detached after its POST dropped")
	}
	ex.answer("1", []byte(`{}`), 0)
	if ex.detached() {
		t.Error("detached once answered")
	}
}

package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestWrongAPIKeyIsNotCalledNeedsLogin guards the misdiagnosed fault of a
// refused credential: a server that answers 401 with a plain `Bearer
// realm=…` challenge and no OAuth metadata anywhere does not need a login.
// Saved anyway, it is failed (not "needs login"), and its error names the
// header to check; added with verification, it is refused with that error.
func TestWrongAPIKeyIsNotCalledNeedsLogin(t *testing.T) {
	t.Parallel()
	var wellKnown atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			wellKnown.Add(1)
			http.NotFound(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="api"`)
		http.Error(w, "invalid api key", http.StatusUnauthorized)
	}))
	defer srv.Close()
	e := testenv.New(t)
	e.StartDaemon()

	if r := e.Run("wrong-key-value\n", "secret", "set", "API_KEY"); r.Code != 0 {
		t.Fatalf("secret set: %s", r.Stderr)
	}
	e.MustRun("add", "keyed", srv.URL+"/mcp", "--header", "X-Api-Key=API_KEY", "--no-verify")
	st := waitState(t, e, "keyed", "failed", 20*time.Second)
	if st.Auth != nil && st.Auth.NeedsLogin {
		t.Errorf("a server refusing an API key is shown as needing a login: %+v", st.Auth)
	}
	mustContain(t, "the failed server's error", st.LastError, "refused the credential")
	mustContain(t, "the failed server's error", st.LastError, "X-Api-Key")
	if out := e.MustRun("ls"); strings.Contains(out, "plexus login") {
		t.Errorf("plexus ls tells to log in:\n%s", out)
	}

	r := e.Run("", "add", "bare", srv.URL+"/mcp")
	if r.Code == 0 {
		t.Error("a server refusing every request without OAuth on offer was saved as needing a login")
	}
	mustContain(t, "add without a credential", r.Stderr, "sent none")
	if strings.Contains(r.Stderr, "plexus login") {
		t.Errorf("add tells to log in: %s", r.Stderr)
	}
	if wellKnown.Load() == 0 {
		t.Error("no OAuth discovery was tried before deciding")
	}
}

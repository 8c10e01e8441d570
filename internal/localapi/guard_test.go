package localapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestSocketNeedsTheToken: over the socket, a caller of the daemon's own
// uid that does not send the token — a program that got hold of the
// socket's path, not of the home — is refused every route, reads and
// writes alike, and its connection is closed; a wrong token is no token.
func TestSocketNeedsTheToken(t *testing.T) {
	_, c := serve(t)
	for _, auth := range []string{"none", "Bearer ", "Bearer wrong", "Basic " + testToken, "Bearer " + testToken + "x", "bearer " + testToken} {
		for _, rt := range []struct{ method, path, body string }{
			{"GET", "/v1/status", ""},
			{"GET", "/v1/export?client=claude", ""},
			{"POST", "/v1/servers", `{"name":"x","config":{"type":"stdio","command":"touch","args":["/tmp/x"]}}`},
			{"PUT", "/v1/secrets/A", `{"value":"v"}`},
			{"POST", "/v1/ui/login", ""},
			{"GET", "/nothing", ""},
		} {
			resp := do(t, c, rt.method, rt.path, rt.body, "Authorization", auth)
			if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
				t.Errorf("%s %s with %q: status %d (close %v), want 401 and the connection closed", rt.method, rt.path, auth, resp.StatusCode, resp.Close)
			}
			e := decodeError(t, resp)
			if e.Code != apitype.CodeUnauthorized || !strings.Contains(e.Message, "$PLEXUS_HOME/token") || !strings.Contains(e.Hint, "PLEXUS_HOME") {
				t.Errorf("%s %s with %q: %+v, want the remedy", rt.method, rt.path, auth, e)
			}
		}
	}
	if resp := do(t, c, "GET", "/v1/status", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: status %d", resp.StatusCode)
	}
}

// TestWithoutATokenEverythingIsRefused: a daemon that set no token (a
// bug) refuses, not admits, callers who send none.
func TestWithoutATokenEverythingIsRefused(t *testing.T) {
	a := New(nil, nil)
	for _, auth := range []string{"", "Bearer ", "Bearer x"} {
		r, _ := http.NewRequest("GET", "/v1/status", nil)
		r.Header.Set("Authorization", auth)
		if bearer(r, a.Token) {
			t.Errorf("%q admitted without a token set", auth)
		}
	}
}

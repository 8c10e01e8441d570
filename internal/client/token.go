package client

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// TokenName is the file under the home holding the daemon's token: the
// capability every request to the daemon carries, on the socket as on the
// loopback address (docs/security.md). The file is 0600 in the 0700 home,
// so holding it means being the user's own program outside any sandbox;
// being able to reach the socket does not.
const TokenName = "token"

// token is the token, read from the home on first use and again after
// the daemon refused it (it makes a new one when the file was removed).
type token struct {
	mu  sync.Mutex
	val string
}

func (t *token) get(home string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.val == "" {
		// Missing or unreadable: the request goes without, and the
		// daemon's refusal says what to send.
		b, _ := os.ReadFile(filepath.Join(home, TokenName))
		t.val = strings.TrimSpace(string(b))
	}
	return t.val
}

func (t *token) forget() {
	t.mu.Lock()
	t.val = ""
	t.mu.Unlock()
}

// authTransport sends the token with every request of base.
type authTransport struct {
	c    *Client
	base http.RoundTripper
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if tok := t.c.tok.get(t.c.home); tok != "" && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.c.tok.forget()
	}
	return resp, err
}

// AuthHeader is the header that carries the token, for a client of the
// daemon that makes its own requests on the socket (the `plexus mcp`
// bridge's fast path); empty when there is no token to read.
func (c *Client) AuthHeader() http.Header {
	tok := c.tok.get(c.home)
	if tok == "" {
		return http.Header{}
	}
	return http.Header{"Authorization": {"Bearer " + tok}}
}

// RereadToken is AuthHeader with the token read from the home again: for
// a client whose request the daemon refused with the token it held.
func (c *Client) RereadToken() http.Header {
	c.tok.forget()
	return c.AuthHeader()
}

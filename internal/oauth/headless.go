package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// MaxAuthorizations bounds the authorizations one Handler runs: a server
// that keeps answering 403 insufficient_scope gets no more than this
// (MCP step-up: clients SHOULD limit retries).
const MaxAuthorizations = 3

// Handler runs the whole flow without a person, for a client whose
// authorization server redirects at once (the conformance suite's mock):
// it is an auth.OAuthHandler for the SDK's streamable transport, built on
// the same discovery, registration, flow and token store as the daemon.
type Handler struct {
	M      *Manager
	Params LoginParams
	// Fetch follows the authorization URL and returns the URL the browser
	// would be redirected to; default: GET it and read the Location header.
	Fetch func(ctx context.Context, authURL string) (string, error)

	mu    sync.Mutex
	tries int // guarded by mu
}

var _ auth.OAuthHandler = (*Handler)(nil)

// Transport is the Manager's transport for the handler's server at
// serverURL, for a client that uses the handler: a 401 that no refresh
// mends is passed on to the client, whose OAuth handler answers it with a
// new login (the daemon's own transport fails the request instead).
func (h *Handler) Transport(serverURL string, base http.RoundTripper) http.RoundTripper {
	t := h.M.ConfiguredTransport(h.Params.Server, serverURL, base, false).(*transport)
	t.passRefusals = true
	return t
}

// TokenSource serves the stored token, refreshed before it expires.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	if e := h.M.entryFor(h.Params.Server); e == nil || e.Token == nil {
		return nil, nil
	}
	return tokenSource{h}, nil
}

type tokenSource struct{ h *Handler }

func (s tokenSource) Token() (*oauth2.Token, error) {
	tok, err := s.h.M.AccessToken(context.Background(), s.h.Params.Server)
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: tok, TokenType: "Bearer"}, nil
}

// Authorize runs a login after a 401, or a step-up after a 403
// insufficient_scope, at most MaxAuthorizations times.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	headers := resp.Header.Values("WWW-Authenticate")
	ch := parseChallenge(headers)
	if resp.StatusCode == http.StatusForbidden && ch.err != "insufficient_scope" {
		return nil // not an authorization problem: the retry shows the error
	}
	h.mu.Lock()
	h.tries++
	tries := h.tries
	h.mu.Unlock()
	if tries > MaxAuthorizations {
		return fmt.Errorf("gave up after %d authorizations: the server keeps refusing access", MaxAuthorizations)
	}
	p := h.Params
	p.Challenge = headers
	if p.Grant != nil {
		h.M.SetGrant(p)
		_, err := h.M.obtain(ctx, p)
		return err
	}
	pd, err := h.M.begin(ctx, p, nil)
	if err != nil {
		return err
	}
	fetch := h.Fetch
	if fetch == nil {
		fetch = followOnce
	}
	redirected, err := fetch(ctx, pd.AuthURL)
	if err != nil {
		return err
	}
	e, err := h.M.finish(ctx, pd, redirected)
	if err != nil {
		return err
	}
	return h.M.store(e)
}

// followOnce GETs authURL and returns its redirect's Location.
func followOnce(ctx context.Context, authURL string) (string, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", errors.New("reaching the authorization endpoint: " + scrubError(err))
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("the authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}

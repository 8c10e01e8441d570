package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// SanitizeURL returns raw fit for logs and status: no userinfo, no fragment,
// and every query value replaced by "REDACTED" (keys stay, they help people
// recognise the URL). An unparsable URL yields "<invalid URL>".
func SanitizeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return "<invalid URL>"
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" || u.ForceQuery {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if k, _, ok := strings.Cut(p, "="); ok {
				parts[i] = k + "=REDACTED"
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}

// StatusError is a connect failure caused by an HTTP error status, such as 401
// (the daemon then starts the OAuth flow) or 404 (a wrong URL).
type StatusError struct {
	StatusCode      int
	URL             string // sanitized
	WWWAuthenticate string // the server's challenge, if any (not a secret)
	// Check says, for a 401, which credential the server refused (names of
	// headers, never their values).
	Check string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s from %s", e.StatusCode, http.StatusText(e.StatusCode), e.URL)
	if e.Check != "" {
		msg += ": " + e.Check
	}
	return msg
}

// refusedCredential says which credential a 401 refused: the configured
// headers by name (and so the secrets they are made of), the URL's query,
// or none at all.
func (t *headerTransport) refusedCredential() string {
	var names []string
	for k := range t.headers {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	slices.Sort(names)
	switch {
	case len(names) > 0:
		return "the server refused the credential: check the value of " + strings.Join(names, ", ") + " and the secret it is made of (`plexus secret set`)"
	case t.origin.RawQuery != "":
		return "the server refused the credential: check the key in the URL's query"
	}
	return "the server wants a credential and Plexus sent none: configure the header it expects (`plexus edit NAME`)"
}

// ForeignEndpointError is a legacy SSE server naming a message endpoint on
// another origin than its own URL's. Following it would let any server aim
// the daemon's POSTs at loopback or LAN services (server-side request
// forgery), so it is refused before anything is sent there.
type ForeignEndpointError struct {
	URL      string // the server's, sanitized
	Endpoint string // the endpoint it named, sanitized
}

func (e *ForeignEndpointError) Error() string {
	return fmt.Sprintf("the SSE server %s named its message endpoint on another origin (%s); Plexus posts only to the server's own origin: check the server's URL, or ask its operator to serve the endpoint there", e.URL, e.Endpoint)
}

// sameOrigin reports whether a and b share scheme, host and port (a port
// left out is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// headerTransport adds the configured headers to each request to the server's
// own origin, and remembers the last HTTP failure so that a failed connect
// can say what went wrong.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	origin  *url.URL
	// ownOriginOnly refuses every request to another origin (legacy SSE,
	// whose server names the URL the daemon posts to).
	ownOriginOnly bool
	// recordGET: whether a failed GET counts. For streamable HTTP it does not:
	// the optional standalone event stream may be refused (405, or another
	// 4xx from lenient servers) without harm.
	recordGET bool
	// version is the negotiated protocol version once known, sent as
	// Mcp-Protocol-Version where the SDK leaves it out: the SDK learns it
	// only through a connection method it cannot reach past Plexus's
	// routing wrapper (routeconn.go).
	version atomic.Pointer[string]

	mu      sync.Mutex
	last    *StatusError          // guarded by mu; last error status, reset by a success
	foreign *ForeignEndpointError // guarded by mu; a refused request elsewhere
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.ownOriginOnly && !sameOrigin(req.URL, t.origin) {
		e := &ForeignEndpointError{URL: SanitizeURL(t.origin.String()), Endpoint: SanitizeURL(req.URL.String())}
		t.mu.Lock()
		t.foreign = e
		t.mu.Unlock()
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, e
	}
	// Only to the configured origin: a redirect or an SSE message endpoint
	// elsewhere must not receive the credentials.
	own := req.URL.Scheme == t.origin.Scheme && req.URL.Host == t.origin.Host
	v := t.version.Load()
	if own && v != nil && era.IsStateless(*v) && req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == "" {
		if resp, done := eraCancel(req); done {
			return resp, nil
		}
	}
	fixEra := own && v != nil && era.HeadersDiffer(req.Header, *v)
	if own && (len(t.headers) > 0 || fixEra) {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			if _, set := req.Header[http.CanonicalHeaderKey(k)]; !set {
				req.Header[http.CanonicalHeaderKey(k)] = vs
			}
		}
		if fixEra {
			era.ServerHeaders(req.Header, *v) // the headers of the server's era (break 2)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp, err = readAnswer(req, resp); err != nil {
		return nil, err
	}
	if req.Method == http.MethodPost && isKeepAlive(req.Context()) {
		return refusedCheck(req, resp), nil // not recorded: a refusal is not a failure
	}
	if req.Method == http.MethodGet && !t.recordGET {
		return resp, nil
	}
	t.mu.Lock()
	if resp.StatusCode >= 400 {
		t.last = &StatusError{
			StatusCode:      resp.StatusCode,
			URL:             SanitizeURL(req.URL.String()),
			WWWAuthenticate: resp.Header.Get("WWW-Authenticate"),
		}
	} else {
		t.last = nil
	}
	t.mu.Unlock()
	return resp, nil
}

// connectError turns a failed handshake (or a lost connection) into a clear
// error: the HTTP status, or a refused connection, always with the sanitized
// URL.
func (t *headerTransport) connectError(err error, sanitized string) error {
	t.mu.Lock()
	last, foreign := t.last, t.foreign
	t.mu.Unlock()
	switch {
	case foreign != nil:
		return foreign
	case last != nil && last.StatusCode == http.StatusUnauthorized:
		e := *last
		e.Check = t.refusedCredential()
		return &e
	case last != nil && last.StatusCode >= 400 && last.StatusCode < 500:
		return last
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("connection refused by %s: %w", sanitized, err)
	case last != nil:
		return fmt.Errorf("%w: %w", last, err)
	}
	return fmt.Errorf("%s: %w", sanitized, err)
}

// remoteHTTPClient returns a client for the server: a copy of s.HTTPClient
// (never modified) or a fresh one, with headerTransport in front. release
// frees the idle connections of a transport made here.
func remoteHTTPClient(s Spec, origin *url.URL) (hc *http.Client, ht *headerTransport, release func()) {
	release = func() {}
	var c http.Client
	if s.HTTPClient != nil {
		c = *s.HTTPClient
	}
	base := c.Transport
	if base == nil {
		if s.HTTPClient == nil {
			owned := http.DefaultTransport.(*http.Transport).Clone()
			base, release = owned, owned.CloseIdleConnections
		} else {
			base = http.DefaultTransport
		}
	}
	ht = &headerTransport{base: base, headers: s.Headers.Clone(), origin: origin, recordGET: s.Type == "sse", ownOriginOnly: s.Type == "sse"}
	c.Transport = ht
	return &c, ht, release
}

// remoteTransport builds the SDK transport for s.Type.
func remoteTransport(s Spec, hc *http.Client) mcp.Transport {
	if s.Type == "sse" {
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
	}
	return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}
}

// keepTransport remembers the Connection the SDK gets, so that Close can break
// it (failing calls in flight) before the session's graceful close, which
// would otherwise wait for them. It also keeps the connection alive past the
// startup context: the SSE transport ties its event stream to the context
// given to Connect.
type keepTransport struct {
	inner  mcp.Transport
	life   context.Context    // lives as long as the Conn
	cancel context.CancelFunc // ends life
	conn   mcp.Connection
}

func (t *keepTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// Bound the connect itself by ctx, the stream after it by life.
	stop := context.AfterFunc(ctx, t.cancel)
	conn, err := t.inner.Connect(t.life)
	if !stop() {
		if conn != nil {
			conn.Close()
		}
		return nil, ctx.Err()
	}
	t.conn = conn
	return conn, err
}

// eraCancel answers, in Plexus, a notifications/cancelled the SDK's client
// would POST to an MCP 2026-07-28 server: that era cancels a request by
// closing it (which the SDK does too), and a server of that era refuses
// any POST without the Mcp-Method header the SDK leaves off — a 400 that
// the SDK takes for a broken connection, losing the server. Any other
// POST without the header is the server's to judge. done is false when
// req is not such a notification; its body is then left whole.
func eraCancel(req *http.Request) (*http.Response, bool) {
	if req.Body == nil || req.ContentLength < 0 || req.ContentLength > 4<<10 {
		return nil, false
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || !bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return nil, false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.ID != nil || m.Method != "notifications/cancelled" {
		return nil, false
	}
	return &http.Response{StatusCode: http.StatusAccepted, Status: "202 Accepted", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: req}, true
}

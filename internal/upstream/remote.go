package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/sse"
	"github.com/plexus-mcp/plexus/internal/tracing"
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
	// life ends with the connection: a subscriptions/listen stream, which
	// the SDK opens without a deadline, does not outlive it (listen);
	// pumps are the goroutines that feed those streams.
	life  context.Context
	pumps sync.WaitGroup
	// session renews a session the server no longer knows (session.go);
	// nil for legacy SSE.
	session *sessionKeeper
	log     *slog.Logger

	mu      sync.Mutex
	last    *StatusError          // guarded by mu; last error status, reset by a success
	refused *StatusError          // guarded by mu; the last POST's 401 or 403, reset by a POST's success
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
	if own && req.Method == http.MethodPost && dropped(req.Context()) {
		if resp, done := eraCancel(req); done {
			return resp, nil // the SDK's notice of a call its client dropped (dropcall.go)
		}
	}
	fixEra := own && v != nil && era.HeadersDiffer(req.Header, *v)
	cloned := false
	if own && (len(t.headers) > 0 || fixEra) {
		req, cloned = req.Clone(req.Context()), true
		for k, vs := range t.headers {
			if _, set := req.Header[http.CanonicalHeaderKey(k)]; !set {
				req.Header[http.CanonicalHeaderKey(k)] = vs
			}
		}
		if fixEra {
			era.ServerHeaders(req.Header, *v) // the headers of the server's era (break 2)
		}
	}
	if own && tracing.On() && req.Method == http.MethodPost {
		if !cloned {
			req, cloned = req.Clone(req.Context()), true
		}
		tracing.InjectHeader(req.Context(), req.Header) // the call's span, if it has one
	}
	if own && t.session != nil {
		if req.Header.Get(sessionHeader) != "" && !cloned {
			req = req.Clone(req.Context())
		}
		t.session.outgoing(req)
	}
	if own && req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == "subscriptions/listen" {
		return t.listen(req)
	}
	if own {
		t.markRefusal(req, nil)
	}
	var resp *http.Response
	var err error
	if own && t.session != nil && req.Method == http.MethodDelete {
		resp, err = resendOnReused(t.base, req)
	} else {
		resp, err = t.base.RoundTrip(req)
		if err != nil && own && req.Method == http.MethodPost && req.Context().Err() == nil && carriesNotification(req) {
			resp, err = resendOnReused(t.base, req)
		}
	}
	if err != nil {
		if own {
			markUnreached(req, err)
		}
		return resp, err
	}
	// A DELETE's 404 is its answer: the session it ends is gone already,
	// and a new one would be opened only to be ended.
	if own && t.session != nil && resp.StatusCode == http.StatusNotFound && req.Header.Get(sessionHeader) != "" && !isRenewal(req.Context()) && req.Method != http.MethodDelete {
		if resp, err = t.sessionLost(req, resp); err != nil {
			return nil, err
		}
	}
	if resp, err = readAnswer(req, resp); err != nil {
		return nil, err
	}
	if own {
		t.markRefusal(req, resp)
	}
	if own && t.session != nil {
		t.session.incoming(resp)
	}
	if req.Method == http.MethodPost && refusal(req, resp) {
		if out, notice := refusedNotice(req, resp); notice {
			t.log.Warn("the server refused a notification or response Plexus sent", "status", resp.StatusCode)
			return out, nil
		}
		if isKeepAlive(req.Context()) {
			return refusedCheck(req, resp), nil // not recorded: a refusal is not a failure
		}
		t.record(req, resp)
		if t.session != nil {
			// Streamable HTTP answers a request in its POST's response
			// (legacy SSE on its stream, which a refused POST never
			// reaches: that refusal is the SDK's to report).
			return refusedCheck(req, resp), nil
		}
		return resp, nil
	}
	if req.Method == http.MethodGet && !t.recordGET {
		return resp, nil
	}
	t.record(req, resp)
	return resp, nil
}

// record remembers the last HTTP failure (a status of 400 or more), for a
// failed connect to say what went wrong, or forgets it on a success.
func (t *headerTransport) record(req *http.Request, resp *http.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if resp.StatusCode >= 400 {
		t.last = &StatusError{
			StatusCode:      resp.StatusCode,
			URL:             SanitizeURL(req.URL.String()),
			WWWAuthenticate: resp.Header.Get("WWW-Authenticate"),
		}
	} else {
		t.last = nil
	}
}

// refusal reports whether resp refuses req: a 4xx that is an answer, not a
// loss — not 401 or 403 (credentials) nor a 404 naming a session (the
// session is gone, session.go).
func refusal(req *http.Request, resp *http.Response) bool {
	code := resp.StatusCode
	return code >= 400 && code < 500 && code != http.StatusUnauthorized && code != http.StatusForbidden &&
		!(code == http.StatusNotFound && req.Header.Get(sessionHeader) != "")
}

// sessionLost handles a 404 to a request on a session: the server no
// longer knows the session. It opens a new one (session.go) and sends the
// request again on it — a request refused so was never processed — or,
// if no new session could be opened, returns the 404 for the SDK to take
// the connection for lost. A GET (the standalone stream, or a call's
// stream resumed) is not sent again: its events were the old session's.
func (t *headerTransport) sessionLost(req *http.Request, resp *http.Response) (*http.Response, error) {
	resp.Body.Close()
	sent := req.Header.Get(sessionHeader)
	ctx := context.WithValue(req.Context(), renewalKey{}, true)
	send := func(ctx context.Context, sid string, msg jsonrpc.Message) (*http.Response, error) {
		body, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set(sessionHeader, sid)
		}
		return t.RoundTrip(r)
	}
	notFound := func() *http.Response {
		return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Request: req}
	}
	if !t.session.renew(ctx, sent, send) || req.Method == http.MethodGet || (req.Body != nil && req.GetBody == nil) {
		return notFound(), nil
	}
	again := req.Clone(ctx)
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		again.Body = body
	}
	// The live session now: req went out on the one the server lost
	// (the SDK's, or one renewed before).
	t.session.resend(again)
	return t.base.RoundTrip(again)
}

// renewalKey marks the requests of a session's renewal, which never
// renew a session themselves.
type renewalKey struct{}

func isRenewal(ctx context.Context) bool { v, _ := ctx.Value(renewalKey{}).(bool); return v }

// refusedNotice turns a 4xx answer to a notification or a response that
// Plexus posted (a cancellation the server does not take, say) into the
// 202 it would have got had the server taken it: the server answered, and
// nothing waits for an answer to a notification. Without it the SDK's
// client takes the refusal for a broken connection and fails every call
// on it. done is false when req carries a call.
func refusedNotice(req *http.Request, resp *http.Response) (*http.Response, bool) {
	if req.GetBody == nil {
		return resp, false
	}
	rb, err := req.GetBody()
	if err != nil {
		return resp, false
	}
	sent, _ := io.ReadAll(io.LimitReader(rb, 1<<20))
	msg, err := jsonrpc.DecodeMessage(sent)
	if call, ok := msg.(*jsonrpc.Request); err != nil || (ok && call.IsCall()) {
		return resp, false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return &http.Response{StatusCode: http.StatusAccepted, Status: "202 Accepted", Proto: resp.Proto, ProtoMajor: resp.ProtoMajor,
		ProtoMinor: resp.ProtoMinor, Header: http.Header{}, Body: http.NoBody, Request: req}, true
}

// listen sends a subscriptions/listen (MCP 2026-07-28), whose answer is a
// stream that lasts as long as the subscription, and which the SDK sends
// with no deadline, its write holding every other request of the
// connection until the answer's headers come. So the SDK gets an event
// stream at once, fed by the real exchange, which goes on beside it and
// ends with the connection (life) or the subscription (req's context): an
// event stream is passed on as it comes, a JSON answer as one event once
// it has come whole, and a refusal or a failure ends the stream, with a
// warning (the server's list changes will not be heard). A server whose
// answer never begins, or never ends, holds nothing: not the handshake,
// so not add, reload or the daemon's start, and not
// the requests after it.
func (t *headerTransport) listen(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stopLife := context.AfterFunc(t.lifeContext(), cancel)
	pr, pw := io.Pipe()
	t.pumps.Add(1)
	go func() {
		defer t.pumps.Done()
		defer stopLife()
		defer cancel()
		pw.CloseWithError(t.pumpListen(req.WithContext(ctx), pw))
	}()
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: &endingBody{ReadCloser: pr, end: cancel},
		ContentLength: -1, Request: req}, nil
}

// listenMaxJSON bounds a JSON answer to subscriptions/listen.
const listenMaxJSON = 4 << 20

// pumpListen makes the real subscriptions/listen exchange and writes its
// answer to w as an event stream; nil at a clean end.
func (t *headerTransport) pumpListen(req *http.Request, w io.Writer) error {
	refused := func(why string, args ...any) error {
		if req.Context().Err() == nil {
			t.log.Warn("subscriptions/listen: "+why+"; the server's list changes will not be heard", args...)
		}
		return nil
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return refused("no answer", "err", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return refused("refused", "status", resp.StatusCode)
	}
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt {
	case "text/event-stream":
		_, err := io.Copy(w, resp.Body)
		return err
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, listenMaxJSON))
		if err != nil {
			return err
		}
		var one bytes.Buffer
		if err := json.Compact(&one, body); err != nil {
			return refused("an answer that is not JSON", "err", err)
		}
		_, err = w.Write(sse.AppendData(nil, "message", "", one.Bytes()))
		return err
	default:
		return refused("an answer of another type", "type", resp.Header.Get("Content-Type"))
	}
}

// lifeContext is the connection's life, or, before it is set, one that
// never ends.
func (t *headerTransport) lifeContext() context.Context {
	if t.life == nil {
		return context.Background()
	}
	return t.life
}

// endingBody calls end once closed.
type endingBody struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
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
		return t.withCheck(last)
	case last != nil && last.StatusCode >= 400 && last.StatusCode < 500:
		return last
	case ConnRefused(err):
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
		owned := NewTransport() // transport.go
		base, release = owned, owned.CloseIdleConnections
	}
	ht = &headerTransport{base: base, headers: s.Headers.Clone(), origin: origin, recordGET: s.Type == "sse", ownOriginOnly: s.Type == "sse",
		log: slog.New(slog.DiscardHandler)}
	c.Transport = ht
	return &c, ht, release
}

// remoteTransport builds the SDK transport for s.Type. Its events are
// bounded by readableOnly (unreadable.go), which rewrites them.
func remoteTransport(s Spec, hc *http.Client) mcp.Transport {
	if s.Type == "sse" {
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: -1}
	}
	return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: -1}
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
// POST without the header is the server's to judge. The same answers the
// notice of a call whose client dropped it (dropcall.go), in any era.
// done is false when req is not such a notification; its body is then
// left whole.
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

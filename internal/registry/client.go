package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits of one request to a registry.
const (
	// requestTimeout bounds a request, answer included: the official
	// registry answers in well under a second.
	requestTimeout = 15 * time.Second
	// maxPageBytes bounds a page of a server list (the official
	// registry's 100 entries are about 200 KiB); maxEntryBytes one
	// server's versions or one version.
	maxPageBytes  = 8 << 20
	maxEntryBytes = 4 << 20
	maxRedirects  = 5
	// DefaultLimit is how many servers a search asks for; MaxLimit the
	// most (the official registry's own bound).
	DefaultLimit = 30
	MaxLimit     = 100
)

// Client fetches from MCP registries, keeping answers in a Cache.
type Client struct {
	http  *http.Client
	cache *Cache
	// Fresh is how long an answer is used without asking again.
	Fresh time.Duration
	now   func() time.Time
}

// NewClient returns a client that keeps answers in cache (nil: none).
func NewClient(cache *Cache) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	tr.ResponseHeaderTimeout = requestTimeout
	return &Client{
		http: &http.Client{
			Transport: tr,
			Timeout:   requestTimeout,
			// A redirect stays on its scheme: an https registry is never
			// read over plain http, nor sent to another kind of URL.
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= maxRedirects {
					return fmt.Errorf("more than %d redirects", maxRedirects)
				}
				if req.URL.Scheme != via[0].URL.Scheme {
					return fmt.Errorf("a redirect from %s to %s:// is refused", via[0].URL.Scheme, req.URL.Scheme)
				}
				return nil
			},
		},
		cache: cache,
		Fresh: 10 * time.Minute,
		now:   time.Now,
	}
}

// Source says where an answer came from.
type Source struct {
	// Registry is the registry's base URL.
	Registry string
	// FetchedAt is when the registry sent the answer.
	FetchedAt time.Time
	// Cached is set when the answer was read from the cache rather than
	// asked for now.
	Cached bool
	// Offline is set when the registry could not be asked (Reason says
	// why) and the cached answer is shown instead.
	Offline bool
	Reason  string
}

// Query is a search of a registry's servers.
type Query struct {
	Search string
	Cursor string
	Limit  int
	// Refresh asks the registry even if a fresh answer is cached.
	Refresh bool
}

// Error is a registry that could not be asked, or whose answer is not one.
type Error struct {
	Registry string
	// Unreachable: the registry did not answer (down, a timeout, an HTTP
	// 5xx); otherwise it answered with something that is not an answer.
	Unreachable bool
	// NotFound: it answered 404.
	NotFound bool
	Msg      string
}

func (e *Error) Error() string { return e.Msg }

// List reads one page of servers, the latest version of each, whose name
// holds q.Search.
func (c *Client) List(ctx context.Context, base string, q Query) (Page, Source, error) {
	v := url.Values{}
	v.Set("version", "latest")
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	v.Set("limit", strconv.Itoa(min(limit, MaxLimit)))
	var p Page
	src, err := c.get(ctx, base, "/v0.1/servers?"+v.Encode(), maxPageBytes, q.Refresh, func(b []byte) error {
		var err error
		p, err = DecodePage(b)
		return err
	})
	return p, src, err
}

// Versions reads every version of the server name, newest first.
func (c *Client) Versions(ctx context.Context, base, name string, refresh bool) ([]Entry, Source, error) {
	var p Page
	src, err := c.get(ctx, base, "/v0.1/servers/"+url.PathEscape(name)+"/versions", maxEntryBytes, refresh, func(b []byte) error {
		var err error
		p, err = DecodePage(b)
		return err
	})
	return p.Entries, src, err
}

// Get reads one version of the server name ("latest" is the newest).
func (c *Client) Get(ctx context.Context, base, name, version string, refresh bool) (Entry, Source, error) {
	var e Entry
	path := "/v0.1/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
	src, err := c.get(ctx, base, path, maxEntryBytes, refresh, func(b []byte) error {
		var err error
		e, err = DecodeEntry(b)
		if err == nil && e.Server.Name != name {
			err = fmt.Errorf("it describes %s instead", e.Server.Name)
		}
		return err
	})
	return e, src, err
}

// get answers path of the registry at base: from the cache while fresh,
// else from the registry — decoded by decode before it is kept — else, if
// the registry cannot be reached, from the cache however old, marked
// offline. An answer that decode refuses changes nothing.
func (c *Client) get(ctx context.Context, base, path string, limit int64, refresh bool, decode func([]byte) error) (Source, error) {
	full := strings.TrimRight(base, "/") + path
	src := Source{Registry: base}
	cached, hit := c.cache.load(full)
	if hit && !refresh && c.now().Sub(cached.FetchedAt) < c.Fresh {
		if decode(cached.Body) == nil {
			src.FetchedAt, src.Cached = cached.FetchedAt, true
			return src, nil
		}
	}
	body, err := c.fetch(ctx, base, full, limit)
	if err == nil {
		if derr := decode(body); derr != nil {
			return src, &Error{Registry: base, Msg: fmt.Sprintf("the registry at %s answered with something that is not an MCP registry's answer: %v", base, derr)}
		}
		src.FetchedAt = c.now()
		c.cache.store(full, src.FetchedAt, body)
		return src, nil
	}
	var re *Error
	if errors.As(err, &re) && re.Unreachable && hit && decode(cached.Body) == nil {
		src.FetchedAt, src.Cached, src.Offline, src.Reason = cached.FetchedAt, true, true, re.Msg
		return src, nil
	}
	return src, err
}

// fetch GETs full, bounded in time and size.
func (c *Client) fetch(ctx context.Context, base, full string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, full, nil)
	if err != nil {
		return nil, &Error{Registry: base, Msg: "the registry's URL " + base + " is not valid"}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "plexus")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, &Error{Registry: base, Unreachable: true, Msg: "the registry at " + base + " cannot be reached: " + netReason(err)}
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return nil, &Error{Registry: base, NotFound: true, Msg: "the registry at " + base + " has no such server" + registrySays(res.Body)}
	case res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests:
		return nil, &Error{Registry: base, Unreachable: true, Msg: fmt.Sprintf("the registry at %s answered HTTP %d%s", base, res.StatusCode, registrySays(res.Body))}
	case res.StatusCode != http.StatusOK:
		return nil, &Error{Registry: base, Msg: fmt.Sprintf("the registry at %s answered HTTP %d%s", base, res.StatusCode, registrySays(res.Body))}
	}
	if ct := res.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "json") {
		return nil, &Error{Registry: base, Msg: fmt.Sprintf("the registry at %s answered with %s, not JSON: is it an MCP registry?", base, clean(ct, 60))}
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, &Error{Registry: base, Unreachable: true, Msg: "the registry at " + base + " broke off its answer: " + netReason(err)}
	}
	if int64(len(b)) > limit {
		return nil, &Error{Registry: base, Msg: fmt.Sprintf("the registry at %s answered with more than %d MiB", base, limit>>20)}
	}
	return b, nil
}

// registrySays is the registry's own word on an error, if it sent a short
// {"error": "…"} (or the API's {"detail": "…"}), cleaned to show.
func registrySays(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	var e struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
		Title  string `json:"title"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	for _, s := range []string{e.Error, e.Detail, e.Title} {
		if s = clean(s, 200); s != "" {
			return ": " + s
		}
	}
	return ""
}

// netReason says why a request failed, without the URL (which the caller
// says) or Go's wrapping.
func netReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "no answer within " + requestTimeout.String()
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return "its host name does not resolve (" + clean(dns.Name, 100) + ")"
		}
		return "nothing answers at its address (connection refused or unreachable)"
	}
	return clean(err.Error(), 200)
}

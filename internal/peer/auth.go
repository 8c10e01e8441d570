package peer

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// Every request between replicas carries, in Header, a MAC made for that
// request alone under a key derived from the store's key: bound to its
// method, path and query, its body, the member's Authorization and the
// member the sending replica vouches for (MemberHeader), the replica that
// sent it and the one it is for, and a time and a nonce. The receiver
// takes it only within Skew of its own clock, once (a nonce seen is
// refused), and only if it is the replica named. Nothing on the channel
// is a fixed credential: a request seen on the wire is good for nothing
// else, and not again.

// Header carries a request's MAC on the channel. It is a header of its
// own, not Authorization: a forwarded request keeps its client's
// Authorization, which the replica holding the session checks again.
const Header = "Plexus-Peer-Auth"

// MemberHeader names, on a request a replica makes for a member (a call
// to a server another replica runs), the member it checked: the owner
// holds the call to the member's gates too. It is covered by the MAC.
const MemberHeader = "Plexus-Peer-Member"

// KeyLabel is what the store's key is derived with (HMAC) into the
// channel's key: never the key itself, the loopback token, or anything a
// member holds.
const KeyLabel = "plexus internal channel v2"

// Skew bounds how far a request's time may be from the receiver's clock.
const Skew = 30 * time.Second

// maxBody bounds a request body the channel signs or checks: a JSON-RPC
// message, far larger than any a face takes.
const maxBody = 64 << 20

// Keys are the channel's keys: the one this replica signs with (of the
// store's current key), and every one it takes (also of the old keys of a
// rotation, so that replicas not yet restarted reach it).
type Keys struct {
	sign   []byte
	accept [][]byte
}

// NewKeys makes the keys of derived, the store's keys derived with
// KeyLabel, the current key's first.
func NewKeys(derived [][]byte) Keys {
	k := Keys{accept: derived}
	if len(derived) > 0 {
		k.sign = derived[0]
	}
	return k
}

// mac is the MAC of a request's parts under key.
func mac(key []byte, method, uri, from, to, ts, nonce string, body []byte, auth, member, session string) string {
	bh := sha256.Sum256(body)
	ah := sha256.Sum256([]byte(auth))
	m := hmac.New(sha256.New, key)
	for _, f := range []string{"plexus peer v2", method, uri, from, to, ts, nonce, hex.EncodeToString(bh[:]), hex.EncodeToString(ah[:]), member, session} {
		fmt.Fprintf(m, "%d:%s\n", len(f), f)
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// readBody reads r's body whole (at most maxBody) and puts it back.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > maxBody {
		return nil, errors.New("the request body is over the internal channel's limit")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	return body, nil
}

// Sign makes req a request of replica from for replica to: it names the
// member of req's context (MemberHeader) and puts the MAC in Header.
func (k Keys) Sign(req *http.Request, from, to string) error {
	body, err := readBody(req)
	if err != nil {
		return err
	}
	req.Header.Del(MemberHeader)
	if id, ok := caller.From(req.Context()); ok {
		b, _ := json.Marshal(id)
		req.Header.Set(MemberHeader, base64.RawURLEncoding.EncodeToString(b))
	}
	var n [16]byte
	rand.Read(n[:])
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	nonce := hex.EncodeToString(n[:])
	sum := mac(k.sign, req.Method, req.URL.RequestURI(), from, to, ts, nonce, body,
		req.Header.Get("Authorization"), req.Header.Get(MemberHeader), req.Header.Get("Mcp-Session-Id"))
	req.Header.Set(Header, strings.Join([]string{"v2", from, to, ts, nonce, sum}, "."))
	return nil
}

// Guard admits requests whose Header a replica made for this one (self)
// under one of the channel's keys, once, within Skew; it removes Header
// before next sees the request, and puts the member the sender vouched
// for (if any) in the request's context (caller.From). Anything else is
// 401, logged without what it carried.
type Guard struct {
	keys Keys
	self string
	log  *slog.Logger
	next http.Handler

	mu     sync.Mutex
	seen   map[string]time.Time // nonces taken, until they are past Skew; guarded by mu
	purged time.Time            // when seen was last rid of the nonces past; guarded by mu
}

// maxNonces bounds the nonces kept (they are dropped a minute after
// their request's time): past it, requests are refused until old ones age
// out (a flood of valid requests, which only a replica can make).
const maxNonces = 1 << 20

// NewGuard returns the guard of replica self in front of next.
func NewGuard(keys Keys, self string, log *slog.Logger, next http.Handler) *Guard {
	return &Guard{keys: keys, self: self, log: log, next: next, seen: map[string]time.Time{}}
}

func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get(Header)
	r.Header.Del(Header)
	id, why := g.check(r, got)
	if why != "" {
		g.log.Warn("internal channel: a request refused", "why", why, "remote", r.RemoteAddr, "path", r.URL.Path, "had_credential", got != "")
		code := http.StatusUnauthorized
		if why == whyOther {
			code = http.StatusMisdirectedRequest // the replica it was for is gone: another has its address
		}
		http.Error(w, "this is the internal channel between Plexus replicas", code)
		return
	}
	if id != nil {
		r = r.WithContext(caller.With(r.Context(), *id))
	}
	g.next.ServeHTTP(w, r)
}

const whyOther = "made for another replica"

// check says why r is refused ("" when it is not), and the member its
// sender vouched for.
func (g *Guard) check(r *http.Request, got string) (*caller.Identity, string) {
	parts := strings.Split(got, ".")
	if len(parts) != 6 || parts[0] != "v2" {
		return nil, "no credential of this channel"
	}
	from, to, ts, nonce, sum := parts[1], parts[2], parts[3], parts[4], parts[5]
	if to != g.self {
		return nil, whyOther
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, "no credential of this channel"
	}
	at := time.UnixMilli(ms)
	if d := time.Since(at); d > Skew || d < -Skew {
		return nil, "out of date"
	}
	body, err := readBody(r)
	if err != nil {
		return nil, "the body could not be read"
	}
	member := r.Header.Get(MemberHeader)
	ok := false
	for _, k := range g.keys.accept {
		want := mac(k, r.Method, r.URL.RequestURI(), from, to, ts, nonce, body, r.Header.Get("Authorization"), member, r.Header.Get("Mcp-Session-Id"))
		ok = hmac.Equal([]byte(want), []byte(sum)) || ok
	}
	if !ok {
		return nil, "the credential does not match the request"
	}
	if !g.once(nonce, at) {
		return nil, "replayed"
	}
	r.Header.Del(MemberHeader)
	if member == "" {
		return nil, ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(member)
	var id caller.Identity
	if err != nil || json.Unmarshal(raw, &id) != nil {
		return nil, "the member it names does not parse"
	}
	return &id, ""
}

// once records nonce, made at at, and reports whether it is new.
func (g *Guard) once(nonce string, at time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if now.Sub(g.purged) > Skew || len(g.seen) >= maxNonces {
		for n, until := range g.seen {
			if now.After(until) {
				delete(g.seen, n)
			}
		}
		g.purged = now
	}
	if _, dup := g.seen[nonce]; dup || len(g.seen) >= maxNonces {
		return false
	}
	g.seen[nonce] = at.Add(2 * Skew)
	return true
}

// Transport signs every request it carries for the replica its context
// names (To), as replica from, and sends it over base.
type Transport struct {
	keys Keys
	from string
	base http.RoundTripper
}

// NewTransport returns the channel's transport of replica from, over base
// (DirectTransport).
func NewTransport(keys Keys, from string, base http.RoundTripper) *Transport {
	return &Transport{keys: keys, from: from, base: base}
}

type toKey struct{}

// To has the requests made under ctx signed for replica id.
func To(ctx context.Context, id string) context.Context { return context.WithValue(ctx, toKey{}, id) }

// RoundTrip signs req for the replica named by To in its context, or by
// ForReplica when the transport was made for one.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	to, _ := req.Context().Value(toKey{}).(string)
	return t.roundTrip(req, to)
}

func (t *Transport) roundTrip(req *http.Request, to string) (*http.Response, error) {
	if to == "" {
		return nil, errors.New("internal channel: a request names no replica to sign it for")
	}
	req = req.Clone(To(req.Context(), to))
	if err := t.keys.Sign(req, t.from, to); err != nil {
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// RefusedHeader marks an answer of a replica that refused a request
// before serving it (Owners.ServeOwned): it was not made.
const RefusedHeader = "Plexus-Peer-Refused"

// ForReplica returns a RoundTripper that signs every request for replica
// to: a connection to a server that replica runs. A refusal of that
// replica's (RefusedHeader) comes back as an error NotSent recognises.
func (t *Transport) ForReplica(to string) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := t.roundTrip(req, to)
		if err == nil && resp.Header.Get(RefusedHeader) != "" {
			why := resp.Header.Get(RefusedHeader)
			resp.Body.Close()
			return nil, &notSentError{fmt.Errorf("replica %s did not take the request: %s", to, why)}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

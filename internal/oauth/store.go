package oauth

import (
	"bytes"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/docstore"
)

// FileName is the token store in the daemon's home: mode 0600, written only
// by the daemon, atomically.
const FileName = "oauth.json"

// fileVersion is the version of oauth.json this package writes. Version 1
// kept one entry per issuer and resource, so that two servers at one URL
// (two accounts at one server) shared, and overwrote, one login; it is
// read and migrated.
const fileVersion = 2

// file is the content of oauth.json: one record a login, keyed by its
// account (Account: the server's name, and a team member's).
type file struct {
	Version int               `json:"version"`
	Logins  map[string]*entry `json:"logins"`
}

// entry is what Plexus holds for one login: one server (or one member's
// login at it) at one authorization server. It is never shown outside this
// package: Status is the public view.
//
// Each record changes on its own: a change names the record's Rev it was
// computed from, and one that finds another Rev (another replica changed
// that login meanwhile) is computed again from what is there now, while
// the other records are taken as the store has them (Manager.change).
type entry struct {
	Server string `json:"server"`
	// Rev counts the changes of this record.
	Rev      int64  `json:"rev"`
	Issuer   string `json:"issuer"`
	Resource string `json:"resource"`
	AuthURL  string `json:"authUrl"`
	TokenURL string `json:"tokenUrl"`
	// IssSupported: the server said it sends iss (RFC 9207).
	IssSupported bool   `json:"issSupported,omitempty"`
	Client       client `json:"client"`
	// Scopes granted (or, if the server did not say, requested).
	Scopes []string `json:"scopes,omitempty"`
	Token  *token   `json:"token,omitempty"`
	// Grant is how the token was obtained when not by a person's login:
	// one of the Grant* constants; "" is the authorization code flow.
	Grant string `json:"grant,omitempty"`
	// DPoPKey is the login's DPoP private key (PEM, PKCS #8), when its
	// tokens are DPoP-bound (RFC 9449): the MCP server asks for or
	// accepts DPoP, and its authorization server issues such tokens.
	DPoPKey string `json:"dpopKey,omitempty"`
	// DPoPRefused: the MCP server refused a DPoP-bound token although its
	// metadata said it takes them; its tokens are bearer tokens from then on.
	DPoPRefused bool `json:"dpopRefused,omitempty"`
	// Refreshing is a replica's claim to refresh this login's token now
	// (a shared store only): the others wait for its result rather than
	// spend the same refresh token, which a rotating authorization server
	// takes for a replay and answers by revoking the whole grant.
	Refreshing *claim `json:"refreshing,omitempty"`
}

// claim is who refreshes a login, and until when the claim holds.
type claim struct {
	By    string    `json:"by"`
	Until time.Time `json:"until"`
}

// client is the client identity at the authorization server.
type client struct {
	ID     string `json:"id"`
	Secret string `json:"secret,omitempty"`
	// AuthMethod is how the token endpoint authenticates the client:
	// "client_secret_basic", "client_secret_post", "private_key_jwt"
	// (RFC 7523 §2.2) or "none".
	AuthMethod string `json:"authMethod,omitempty"`
	// key signs private_key_jwt assertions, with alg ("" for the key's
	// default). It comes from the configuration, never from oauth.json.
	key crypto.Signer
	alg string
	// How it was obtained: "preregistered", "metadata-document" or "dynamic".
	Kind         string   `json:"kind"`
	RedirectURIs []string `json:"redirectUris,omitempty"`
	// Scope is the scope a dynamic registration was asked for (the
	// server may have taken it without): a registration is reused only
	// for a login that would ask for the same.
	Scope string `json:"scope,omitempty"`
}

type token struct {
	Access  string `json:"access"`
	Refresh string `json:"refresh,omitempty"`
	Type    string `json:"type,omitempty"`
	// Obtained is when the token was issued to Plexus: with Expiry it
	// gives the token's lifetime, which bounds the refresh margin.
	Obtained time.Time `json:"obtained,omitzero"`
	Expiry   time.Time `json:"expiry,omitzero"`
}

// accountSep separates a server's name from a team member's in an
// account: no server name holds it, and no claim value a token carries
// does either.
const accountSep = "\x00"

// Account names the login a Manager keeps and uses: a server's own (user
// ""), the one-machine daemon's, or a team member's at that server, kept
// apart from every other member's (R-TEAM-2). Every Manager method that
// takes a server takes an account.
func Account(server, user string) string {
	if user == "" {
		return server
	}
	return server + accountSep + user
}

// SplitAccount is the server and the user of an account.
func SplitAccount(account string) (server, user string) {
	server, user, _ = strings.Cut(account, accountSep)
	return server, user
}

// dpop reports whether e's token requests carry a DPoP proof.
func (e *entry) dpop() bool { return e.DPoPKey != "" && !e.DPoPRefused }

func (e *entry) clone() *entry {
	c := *e
	c.Scopes = slices.Clone(e.Scopes)
	c.Client.RedirectURIs = slices.Clone(e.Client.RedirectURIs)
	if e.Token != nil {
		t := *e.Token
		c.Token = &t
	}
	if e.Refreshing != nil {
		r := *e.Refreshing
		c.Refreshing = &r
	}
	return &c
}

// decodeFile reads oauth.json strictly, migrating version 1. Errors never
// quote the content: it holds tokens.
func decodeFile(data []byte) (*file, error) {
	f := &file{Version: fileVersion, Logins: map[string]*entry{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s is not valid JSON (at byte %d)", FileName, se.Offset)
		}
		return nil, fmt.Errorf("%s is not valid: the top level is not an object with a version", FileName)
	}
	switch head.Version {
	case 1:
		return decodeV1(data)
	case fileVersion:
	default:
		return nil, fmt.Errorf("%s: unsupported version %d", FileName, head.Version)
	}
	if err := strictDecode(data, f); err != nil {
		return nil, err
	}
	if f.Logins == nil {
		f.Logins = map[string]*entry{}
	}
	for k, e := range f.Logins {
		if e == nil || e.Server == "" || k != e.Server {
			return nil, fmt.Errorf("%s: a login does not match its key", FileName)
		}
	}
	return f, nil
}

// strictDecode decodes data into v, refusing unknown keys and trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("%s is not valid JSON (at byte %d)", FileName, se.Offset)
		case errors.As(err, &te):
			return fmt.Errorf("%s: %s has the wrong type", FileName, te.Field)
		}
		return fmt.Errorf("%s is not valid: unknown key or malformed content", FileName)
	}
	if dec.More() {
		return fmt.Errorf("%s is not valid: trailing data after the top-level object", FileName)
	}
	return nil
}

// decodeV1 reads a version 1 oauth.json (one entry per issuer and
// resource, the member's name appended for a member's login) as version 2:
// each entry becomes its server's login. Of two entries of one server (a
// login at another issuer kept beside), the one with a token wins.
func decodeV1(data []byte) (*file, error) {
	var v1 struct {
		Version int               `json:"version"`
		Entries map[string]*entry `json:"entries"`
	}
	if err := strictDecode(data, &v1); err != nil {
		return nil, err
	}
	f := &file{Version: fileVersion, Logins: map[string]*entry{}}
	for _, k := range slices.Sorted(maps.Keys(v1.Entries)) {
		e := v1.Entries[k]
		if e == nil || e.Server == "" || k != v1Key(e) {
			return nil, fmt.Errorf("%s: an entry does not match its key", FileName)
		}
		if old := f.Logins[e.Server]; old != nil && old.Token != nil {
			continue
		}
		f.Logins[e.Server] = e
	}
	return f, nil
}

// v1Key is where version 1 kept e.
func v1Key(e *entry) string {
	k := e.Issuer + " " + e.Resource
	if _, user, ok := strings.Cut(e.Server, accountSep); ok {
		k += " " + user
	}
	return k
}

// loadDoc reads oauth.json from docs; a missing one is an empty store.
func loadDoc(docs docstore.Backend) (*file, docstore.Doc, error) {
	d, err := docs.Read(FileName)
	if err != nil {
		return nil, docstore.Doc{}, fmt.Errorf("reading %s: %w", FileName, err)
	}
	f, err := decodeFile(d.Data)
	return f, d, err
}

func encodeFile(f *file) ([]byte, error) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// maxChangeTries bounds the writes of one change that another replica's
// writes keep making stale.
const maxChangeTries = 8

// change applies fn to account's login and saves it. fn gets a copy of the
// record (nil if there is none) and returns the record to keep (nil
// removes it) and whether anything changed. The save is conditional on
// the version of oauth.json read last: when another daemon sharing the
// store wrote it meanwhile, that version is taken — every other login as
// it now is — and fn is applied again to account's record as it now is,
// so that a change decided on an old record is decided afresh (a refresh
// that another replica already made is not overwritten by an older one).
// It returns the record kept and the accounts whose record another
// daemon changed, which the caller announces.
func (m *Manager) change(account string, fn func(cur *entry) (*entry, bool)) (*entry, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var others []string
	for try := 0; ; try++ {
		var cur *entry
		if e := m.f.Logins[account]; e != nil {
			cur = e.clone()
		}
		next, changed := fn(cur)
		if !changed {
			return cur, others, nil
		}
		f := &file{Version: fileVersion, Logins: maps.Clone(m.f.Logins)}
		if next == nil {
			delete(f.Logins, account)
		} else {
			next = next.clone()
			next.Server = account
			next.Rev = 1
			if cur != nil {
				next.Rev = cur.Rev + 1
			}
			f.Logins[account] = next
		}
		data, err := encodeFile(f)
		if err != nil {
			return nil, others, err
		}
		d, err := m.docs.Write(FileName, m.doc, data, false)
		var stale *docstore.StaleError
		if errors.As(err, &stale) && try < maxChangeTries {
			nf, derr := decodeFile(stale.Current.Data)
			if derr != nil {
				return nil, others, fmt.Errorf("saving %s: another replica wrote a version that does not decode: %w", FileName, derr)
			}
			others = append(others, m.adoptLocked(nf, stale.Current)...)
			continue
		}
		if err != nil {
			return nil, others, fmt.Errorf("saving %s: %w", FileName, err)
		}
		m.f, m.doc = f, d
		if next != nil {
			next = next.clone()
		}
		return next, others, nil
	}
}

// adoptLocked makes f (read as d) the store in memory and returns the
// accounts whose record differs from the one held before. A login that
// needed a person here and got a new token elsewhere (another daemon of
// the team logged in, or refreshed) needs one no more. m.mu is held.
func (m *Manager) adoptLocked(f *file, d docstore.Doc) []string {
	var diff []string
	for k, e := range f.Logins {
		old := m.f.Logins[k]
		if old != nil && old.Rev == e.Rev {
			continue
		}
		diff = append(diff, k)
		if st := m.servers[k]; st != nil && st.needsLogin && e.Token != nil &&
			(old == nil || old.Token == nil || old.Token.Access != e.Token.Access) {
			st.needsLogin, st.reason, st.want, st.challenge = false, "", nil, nil
		}
	}
	for k := range m.f.Logins {
		if f.Logins[k] == nil {
			diff = append(diff, k)
		}
	}
	m.f, m.doc = f, d
	return diff
}

// announce tells the owner and the refresh schedule that accounts changed.
func (m *Manager) announce(accounts []string) {
	for _, a := range slices.Compact(slices.Sorted(slices.Values(accounts))) {
		m.schedule(a)
		m.changed(a)
	}
}

// Refresh reads the tokens again, after another daemon sharing the
// backend saved them. A version that does not decode is refused and the
// tokens in memory are kept.
func (m *Manager) Refresh() error {
	diff, err := m.reload()
	if err != nil {
		return err
	}
	m.announce(diff)
	return nil
}

// reload reads oauth.json again and returns the accounts whose record
// changed; it does not announce them.
func (m *Manager) reload() ([]string, error) {
	f, d, err := loadDoc(m.docs)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if d.Same(m.doc) {
		return nil, nil
	}
	return m.adoptLocked(f, d), nil
}

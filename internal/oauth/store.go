package oauth

import (
	"bytes"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/docstore"
)

// FileName is the token store in the daemon's home: mode 0600, written only
// by the daemon, atomically.
const FileName = "oauth.json"

// file is the content of oauth.json: one entry per issuer and resource.
type file struct {
	Version int               `json:"version"`
	Entries map[string]*entry `json:"entries"`
}

// entry is what Plexus holds for one server at one authorization server.
// It is never shown outside this package: Status is the public view.
type entry struct {
	Server   string `json:"server"`
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
	// DPoPKey is the server's DPoP private key (PEM, PKCS #8), when its
	// authorization server issues DPoP-bound tokens (RFC 9449).
	DPoPKey string `json:"dpopKey,omitempty"`
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
}

type token struct {
	Access  string    `json:"access"`
	Refresh string    `json:"refresh,omitempty"`
	Type    string    `json:"type,omitempty"`
	Expiry  time.Time `json:"expiry,omitzero"`
}

func key(issuer, resource string) string { return issuer + " " + resource }

// entryKey is where e is kept: by issuer and resource, and for a team
// member's own login also by the member.
func entryKey(e *entry) string {
	if _, user, ok := strings.Cut(e.Server, accountSep); ok {
		return key(e.Issuer, e.Resource) + " " + user
	}
	return key(e.Issuer, e.Resource)
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

func (e *entry) clone() *entry {
	c := *e
	c.Scopes = slices.Clone(e.Scopes)
	c.Client.RedirectURIs = slices.Clone(e.Client.RedirectURIs)
	if e.Token != nil {
		t := *e.Token
		c.Token = &t
	}
	return &c
}

// decodeFile reads oauth.json strictly. Errors never quote the content: it
// holds tokens.
func decodeFile(data []byte) (*file, error) {
	f := &file{Version: 1, Entries: map[string]*entry{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s is not valid JSON (at byte %d)", FileName, se.Offset)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s: %s has the wrong type", FileName, te.Field)
		}
		return nil, fmt.Errorf("%s is not valid: unknown key or malformed content", FileName)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s is not valid: trailing data after the top-level object", FileName)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: unsupported version %d", FileName, f.Version)
	}
	if f.Entries == nil {
		f.Entries = map[string]*entry{}
	}
	for k, e := range f.Entries {
		if e == nil || e.Server == "" || k != entryKey(e) {
			return nil, fmt.Errorf("%s: an entry does not match its key", FileName)
		}
	}
	return f, nil
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

// saveLocked writes m.f (m.mu held). oauth.json is one document: when
// another replica saved it meanwhile, the last write wins.
func (m *Manager) saveLocked() error {
	data, err := json.MarshalIndent(m.f, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	d, err := m.docs.Write(FileName, m.doc, data, false)
	var stale *docstore.StaleError
	if errors.As(err, &stale) {
		d, err = m.docs.Write(FileName, stale.Current, data, false)
	}
	if err != nil {
		return fmt.Errorf("saving %s: %w", FileName, err)
	}
	m.doc = d
	return nil
}

// Refresh reads the tokens again, after another daemon sharing the
// backend saved them. A version that does not decode is refused and the
// tokens in memory are kept.
func (m *Manager) Refresh() error {
	f, d, err := loadDoc(m.docs)
	if err != nil {
		return err
	}
	m.mu.Lock()
	if d.Same(m.doc) {
		m.mu.Unlock()
		return nil
	}
	m.f, m.doc = f, d
	var servers []string
	for _, e := range f.Entries {
		servers = append(servers, e.Server)
	}
	m.mu.Unlock()
	for _, s := range servers {
		m.changed(s)
	}
	return nil
}

// byServer returns the entry of server (the last one written if several).
func (f *file) byServer(server string) (string, *entry) {
	for k, e := range f.Entries {
		if e.Server == server {
			return k, e
		}
	}
	return "", nil
}

package teamauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/plexus-mcp/plexus/internal/config"
)

// maxDocument bounds a metadata document or key set read from an issuer.
const maxDocument = 1 << 20

// keyring is one issuer's signing keys: read from the jwks_uri of its
// metadata on first use, and read again when a token names a key it does
// not hold (a rotation) — at most once per minRefresh, so that tokens with
// made-up key ids cannot make the daemon hammer the issuer.
type keyring struct {
	issuer     string
	client     *http.Client
	minRefresh time.Duration
	now        func() time.Time

	fetchMu sync.Mutex // one fetch at a time; guards fetched, jwksURI

	mu      sync.RWMutex
	keys    []jose.JSONWebKey // public signing keys only; guarded by mu
	fetched time.Time         // the last fetch, successful or not
	jwksURI string
}

// key returns the issuer's key named kid ("" when the token names none:
// the issuer's one key, if it has exactly one).
func (k *keyring) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	if key, ok := k.lookup(kid); ok {
		return key, nil
	}
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	if key, ok := k.lookup(kid); ok {
		return key, nil // another request fetched it meanwhile
	}
	if !k.fetched.IsZero() && k.now().Sub(k.fetched) < k.minRefresh {
		return jose.JSONWebKey{}, errors.New("the token's signing key is not one of its issuer's keys")
	}
	k.fetched = k.now()
	keys, err := k.fetch(ctx)
	if err != nil {
		return jose.JSONWebKey{}, fmt.Errorf("the issuer's signing keys could not be read: %w", err)
	}
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
	if key, ok := k.lookup(kid); ok {
		return key, nil
	}
	return jose.JSONWebKey{}, errors.New("the token's signing key is not one of its issuer's keys")
}

func (k *keyring) lookup(kid string) (jose.JSONWebKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if kid == "" {
		if len(k.keys) == 1 {
			return k.keys[0], true
		}
		return jose.JSONWebKey{}, false
	}
	for _, key := range k.keys {
		if key.KeyID == kid {
			return key, true
		}
	}
	return jose.JSONWebKey{}, false
}

// fetch reads the issuer's metadata (RFC 8414, then OpenID Connect
// discovery) and the key set it names.
func (k *keyring) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	if k.jwksURI == "" {
		uri, err := k.discover(ctx)
		if err != nil {
			return nil, err
		}
		k.jwksURI = uri
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := k.getJSON(ctx, k.jwksURI, &set); err != nil {
		return nil, fmt.Errorf("the key set: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		// A key of a type this daemon does not know is skipped, not fatal:
		// the set may hold keys for other uses.
		var key jose.JSONWebKey
		if key.UnmarshalJSON(raw) != nil {
			continue
		}
		// A key set holds public keys; a symmetric or private key there is
		// a mistake that must not turn into a verification key (an HMAC
		// "signed" with a public key is the classic forgery).
		if key.IsPublic() && key.Valid() && (key.Use == "" || key.Use == "sig") {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set holds no public signing key")
	}
	return keys, nil
}

// discover finds the issuer's jwks_uri, checking that its metadata names
// the issuer it was fetched for (RFC 8414 §3.3).
func (k *keyring) discover(ctx context.Context) (string, error) {
	u, err := url.Parse(k.issuer)
	if err != nil {
		return "", err
	}
	path := strings.TrimSuffix(u.Path, "/")
	tries := []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(k.issuer, "/") + "/.well-known/openid-configuration",
	}
	var errs []error
	for _, at := range tries {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := k.getJSON(ctx, at, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case meta.Issuer != k.issuer:
			errs = append(errs, errors.New("its metadata names another issuer"))
		case meta.JWKSURI == "":
			errs = append(errs, errors.New("its metadata has no jwks_uri"))
		case config.CheckOAuthURL(meta.JWKSURI) != nil:
			errs = append(errs, errors.New("its jwks_uri is not an https URL"))
		default:
			return meta.JWKSURI, nil
		}
	}
	return "", fmt.Errorf("no usable metadata: %w", errors.Join(errs...))
}

func (k *keyring) getJSON(ctx context.Context, at string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", at, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return err
	}
	if len(body) > maxDocument {
		return fmt.Errorf("GET %s: the document is over %d bytes", at, maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not a JSON document of the right shape", at)
	}
	return nil
}

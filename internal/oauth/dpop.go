package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// DPoP (RFC 9449) binds a server's tokens to a key Plexus holds: one P-256
// key per login, made at the first login where the MCP server asks for or
// accepts DPoP and its authorization server advertises ES256 in
// dpop_signing_alg_values_supported (dpopKeyFor), kept in oauth.json
// (0600) so the tokens stay usable across restarts. Every token request and
// every request to the MCP server carries a fresh proof; a server that
// answers use_dpop_nonce gets the request once more with its nonce (§8, §9).

// newDPoPKey makes a server's DPoP key, PEM-encoded for oauth.json.
func newDPoPKey() (string, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// wantsDPoP reports whether an authorization server that advertises algs
// is asked for DPoP-bound tokens: Plexus's keys sign ES256.
func wantsDPoP(algs []string) bool { return slices.Contains(algs, string(jose.ES256)) }

// dpopProof is the DPoP header of a request (RFC 9449 §4.2): htu is the
// URL without query and fragment, ath the hash of the access token sent
// with it (resource requests only), nonce the server's latest, if any.
func dpopProof(keyPEM, method, target, accessToken, nonce string, now time.Time) (string, error) {
	k, err := parsePrivateKey([]byte(keyPEM))
	if err != nil {
		return "", errors.New("the stored DPoP key is not usable: log in again")
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", errors.New("the request URL is not valid")
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	claims := map[string]any{
		"jti": rand.Text(),
		"htm": method,
		"htu": u.String(),
		"iat": now.Unix(),
	}
	if accessToken != "" {
		h := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(h[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	return signJWT(k, jose.ES256, "dpop+jwt", true, claims)
}

// maxNonce bounds a DPoP-Nonce a server may hand Plexus to keep.
const maxNonce = 1024

// parseNonce checks a DPoP-Nonce header value (RFC 9449 §8.1: nonce =
// 1*NQCHAR, NQCHAR = %x21 / %x23-5B / %x5D-7E). A value that is not one
// (or several headers) is ignored rather than echoed back.
func parseNonce(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	v := values[0]
	if v == "" || len(v) > maxNonce {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return v, true
}

// nonce returns the latest DPoP nonce of server's authorization server
// (as) or resource server.
func (m *Manager) nonce(server string, as bool) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.servers[server]
	if st == nil {
		return ""
	}
	if as {
		return st.asNonce
	}
	return st.rsNonce
}

// keepNonce remembers the nonce a response carried, if it carried one.
func (m *Manager) keepNonce(server string, as bool, values []string) (string, bool) {
	n, ok := parseNonce(values)
	if !ok {
		return "", false
	}
	m.mu.Lock()
	st := m.stateLocked(server)
	if as {
		st.asNonce = n
	} else {
		st.rsNonce = n
	}
	m.mu.Unlock()
	return n, true
}

// dpopKeyFor is the DPoP key for a login at md's authorization server:
// the one kept from before at the same issuer, a new one, or none. Tokens
// are DPoP-bound only where the MCP server asks for them or accepts them
// (its RFC 9728 metadata, or a DPoP challenge): an authorization server
// that offers DPoP says nothing of what the resource server takes, and a
// resource server that takes only bearer tokens refuses a DPoP-bound one.
// A server that refused one before gets bearer tokens, unless its
// metadata now requires DPoP.
func (m *Manager) dpopKeyFor(md *metadata, prev *entry) (string, error) {
	use := md.rsDPoP != ""
	if prev != nil && prev.Resource == md.resource && prev.DPoPRefused && md.rsDPoP != dpopRequired {
		use = false
	}
	if !use {
		return "", nil
	}
	if !wantsDPoP(md.dpopAlgs) {
		if md.rsDPoP == dpopRequired {
			return "", fmt.Errorf("the server requires DPoP-bound tokens (dpop_bound_access_tokens_required, RFC 9449), and its authorization server %s does not issue ES256-bound ones (dpop_signing_alg_values_supported)", md.issuer)
		}
		return "", nil
	}
	if prev != nil && prev.Issuer == md.issuer && prev.DPoPKey != "" {
		return prev.DPoPKey, nil
	}
	k, err := newDPoPKey()
	if err != nil {
		return "", fmt.Errorf("making a DPoP key: %w", err)
	}
	return k, nil
}

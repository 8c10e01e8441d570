package authserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// The server is also a team's identity provider: it signs JWT access
// tokens with an EC P-256 key named by kid, publishes its public keys at
// /jwks (its metadata's jwks_uri), and rotates them on command; with
// Options.JWTSubject the tokens of its own /token are such JWTs too.

// idpKey is one signing key.
type idpKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newIDPKey(n int) idpKey {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return idpKey{kid: fmt.Sprintf("key-%d", n), priv: priv}
}

// jwks serves the public keys.
func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	s.JWKSFetches.Add(1)
	s.mu.Lock()
	set := jose.JSONWebKeySet{}
	for _, k := range s.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: string(jose.ES256), Use: "sig"})
	}
	s.mu.Unlock()
	writeJSON(w, 200, set)
}

// RotateKey adds a new signing key, which signs from now on; the old ones
// stay published.
func (s *Server) RotateKey() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, newIDPKey(len(s.keys)+1))
}

// AccessJWT is an access token for user sub at resource (its aud), signed
// by the current key and valid for ttl; extra claims are added (or, with a
// nil value, removed).
func (s *Server) AccessJWT(sub, resource string, ttl time.Duration, extra map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signLocked(sub, resource, ttl, extra)
}

// signLocked is AccessJWT with s.mu held.
func (s *Server) signLocked(sub, resource string, ttl time.Duration, extra map[string]any) string {
	now := time.Now()
	claims := map[string]any{"iss": s.URL, "sub": sub, "aud": resource, "iat": now.Unix(),
		"nbf": now.Unix(), "exp": now.Add(ttl).Unix(), "jti": rand.Text()}
	for k, v := range extra {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	k := s.keys[len(s.keys)-1]
	return SignJWT(k.priv, k.kid, claims)
}

// SignJWT signs claims as an ES256 compact JWS with kid in the header.
func SignJWT(priv *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		panic(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		panic(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		panic(err)
	}
	return out
}

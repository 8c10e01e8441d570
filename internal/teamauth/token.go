package teamauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/go-jose/go-jose/v4"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// Bounds of what a token may carry: real tokens are a few kilobytes, and
// users' names and group lists short.
const (
	maxToken  = 16 << 10
	maxName   = 320 // an e-mail address is at most 254
	maxGroups = 1000
)

// signingAlgs are the JWS algorithms a token may be signed with: public-key
// ones only. "none" and the HMAC family are not here, so a token that names
// them fails to parse before any key is looked at.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// A refusal of a token: Status 401 with Code invalid_token, or 403 with
// insufficient_scope (RFC 6750 §3.1). Description says what is wrong
// without quoting the token or its claims.
type refusal struct {
	Status      int
	Code        string
	Description string
}

func (r *refusal) Error() string { return r.Description }

func invalid(format string, a ...any) *refusal {
	return &refusal{Status: 401, Code: "invalid_token", Description: fmt.Sprintf(format, a...)}
}

// claims are the members of an access token this daemon reads. Numbers are
// kept as json.Number: a date is checked to be a number, not coerced.
type claims map[string]any

// parseClaims decodes a token's payload: a JSON object, numbers kept.
func parseClaims(payload []byte) (claims, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var c claims
	if err := dec.Decode(&c); err != nil || c == nil {
		return nil, errors.New("the token's claims are not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("the token's claims have trailing data")
	}
	return c, nil
}

func (c claims) str(name string) (string, bool) {
	s, ok := c[name].(string)
	return s, ok
}

// time reads a NumericDate (RFC 7519 §2); present reports whether the
// claim is there at all.
func (c claims) time(name string) (t time.Time, present bool, err error) {
	v, ok := c[name]
	if !ok {
		return time.Time{}, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, true, fmt.Errorf("the token's %s is not a number", name)
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return time.Time{}, true, fmt.Errorf("the token's %s is not a date", name)
	}
	return time.Unix(int64(f), 0), true, nil
}

// strs reads a claim that is a string or an array of strings (aud, the
// groups claim); other members of an array are skipped.
func (c claims) strs(name string) []string {
	switch v := c[name].(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// scopes reads scope (RFC 8693 §4.2, a space-separated string) or scp (an
// array, as some providers send).
func (c claims) scopes() []string {
	if s, ok := c.str("scope"); ok {
		return strings.Fields(s)
	}
	return c.strs("scp")
}

// verified is what a checked token says.
type verified struct {
	id     caller.Identity
	scopes []string
	exp    time.Time
}

// check validates a compact JWS access token and returns what it says.
func (r *Resource) check(ctx context.Context, raw string) (verified, error) {
	if len(raw) > maxToken {
		return verified{}, invalid("the token is over %d bytes", maxToken)
	}
	if strings.Count(raw, ".") != 2 {
		return verified{}, invalid("the token is not a JWT (a compact JWS)")
	}
	obj, err := jose.ParseSignedCompact(raw, signingAlgs)
	if err != nil {
		return verified{}, invalid("the token is not a JWT signed with a public-key algorithm (none and HMAC are refused)")
	}
	if len(obj.Signatures) != 1 {
		return verified{}, invalid("the token has more than one signature")
	}
	hdr := obj.Signatures[0].Protected
	// The payload is read before its signature is checked only to learn
	// which issuer's keys check it; nothing else of it is used until then.
	unverified, err := parseClaims(obj.UnsafePayloadWithoutVerification())
	if err != nil {
		return verified{}, invalid("%s", err)
	}
	iss, _ := unverified.str("iss")
	ring, ok := r.rings[iss]
	if !ok {
		return verified{}, invalid("the token's issuer is not one of team.issuers")
	}
	key, err := ring.key(ctx, hdr.KeyID)
	if err != nil {
		return verified{}, invalid("%s", err)
	}
	if err := algFits(key, hdr.Algorithm); err != nil {
		return verified{}, invalid("%s", err)
	}
	payload, err := obj.Verify(key.Key)
	if err != nil {
		return verified{}, invalid("the token's signature does not verify")
	}
	c, err := parseClaims(payload)
	if err != nil {
		return verified{}, invalid("%s", err)
	}
	if got, _ := c.str("iss"); got != iss {
		return verified{}, invalid("the token's issuer is not one of team.issuers")
	}
	if !slices.Contains(c.strs("aud"), r.team.Resource) {
		return verified{}, invalid("the token is not for this resource: its aud must name %s (RFC 8707)", r.team.Resource)
	}
	exp, err := r.checkTimes(c)
	if err != nil {
		return verified{}, invalid("%s", err)
	}
	user, ok := c.str(r.team.User())
	if !ok || user == "" {
		return verified{}, invalid("the token has no %s claim naming its user (team.userClaim)", r.team.User())
	}
	// The user names log lines and metric series: a name no person has is
	// refused rather than carried.
	if len(user) > maxName || strings.ContainsFunc(user, unicode.IsControl) {
		return verified{}, invalid("the token's %s claim is not a user's name", r.team.User())
	}
	groups := c.strs(r.team.Groups())
	if len(groups) > maxGroups {
		return verified{}, invalid("the token lists more than %d groups", maxGroups)
	}
	sub, _ := c.str("sub")
	id := caller.Identity{Issuer: iss, Subject: sub, User: user, Groups: groups}
	return verified{id: id, scopes: c.scopes(), exp: exp}, nil
}

// checkTimes checks exp (required), nbf and iat, with skew either way.
func (r *Resource) checkTimes(c claims) (time.Time, error) {
	now := r.now()
	exp, present, err := c.time("exp")
	switch {
	case err != nil:
		return exp, err
	case !present:
		return exp, errors.New("the token has no exp")
	case now.After(exp.Add(r.skew)):
		return exp, errors.New("the token has expired")
	}
	if nbf, _, err := c.time("nbf"); err != nil {
		return exp, err
	} else if now.Add(r.skew).Before(nbf) {
		return exp, errors.New("the token is not valid yet (nbf)")
	}
	if iat, _, err := c.time("iat"); err != nil {
		return exp, err
	} else if now.Add(r.skew).Before(iat) {
		return exp, errors.New("the token was issued in the future (iat)")
	}
	return exp, nil
}

// algFits reports whether a token's algorithm is one its key signs with:
// the key's own alg when the key set names one, else one of its type's.
func algFits(key jose.JSONWebKey, alg string) error {
	if key.Algorithm != "" {
		if key.Algorithm != alg {
			return errors.New("the token's algorithm is not its key's")
		}
		return nil
	}
	var fits []jose.SignatureAlgorithm
	switch k := key.Key.(type) {
	case *rsa.PublicKey:
		fits = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			fits = []jose.SignatureAlgorithm{jose.ES256}
		case elliptic.P384():
			fits = []jose.SignatureAlgorithm{jose.ES384}
		case elliptic.P521():
			fits = []jose.SignatureAlgorithm{jose.ES512}
		}
	case ed25519.PublicKey:
		fits = []jose.SignatureAlgorithm{jose.EdDSA}
	}
	if !slices.Contains(fits, jose.SignatureAlgorithm(alg)) {
		return errors.New("the token's algorithm is not its key's")
	}
	return nil
}

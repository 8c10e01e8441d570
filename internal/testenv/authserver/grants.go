package authserver

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// The grants without a person (Options.ClientCredentials, JWTBearer) and
// DPoP (Options.DPoP): proofs are checked as RFC 9449 §4.3 says — typ, an
// asymmetric alg, the embedded key verifying the signature, htm, htu, iat,
// a fresh jti, the nonce when one is required, and at the MCP endpoint ath
// and the key the token is bound to.

const dpopNonceLife = time.Minute

var dpopAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA}

// checkAssertion verifies a JWT signed by key (private_key_jwt client
// authentication or a workload's JWT bearer grant) for audience aud and
// returns its claims.
func checkAssertion(raw string, key crypto.PublicKey, aud string) (map[string]any, error) {
	obj, err := jose.ParseSignedCompact(raw, dpopAlgs)
	if err != nil {
		return nil, err
	}
	payload, err := obj.Verify(key)
	if err != nil {
		return nil, err
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, err
	}
	if c["aud"] != aud {
		return nil, errors.New("wrong audience")
	}
	if exp, _ := c["exp"].(float64); time.Unix(int64(exp), 0).Before(time.Now()) {
		return nil, errors.New("expired")
	}
	return c, nil
}

// Proof is what a checked DPoP proof says.
type Proof struct {
	JKT   string // the RFC 7638 thumbprint of its key
	JTI   string
	Nonce string
}

// CheckProof checks the DPoP proof of r (RFC 9449 §4.3) for a request to
// htu; token is the access token it comes with ("" at a token endpoint),
// whose hash must be its ath. Nonce and replay are the caller's to check.
func CheckProof(r *http.Request, htu, token string) (Proof, error) {
	vals := r.Header.Values("DPoP")
	if len(vals) != 1 {
		return Proof{}, errors.New("not exactly one DPoP header")
	}
	obj, err := jose.ParseSignedCompact(vals[0], dpopAlgs)
	if err != nil || len(obj.Signatures) != 1 {
		return Proof{}, errors.New("not a JWS")
	}
	h := obj.Signatures[0].Protected
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return Proof{}, errors.New("wrong typ or jwk")
	}
	payload, err := obj.Verify(h.JSONWebKey)
	if err != nil {
		return Proof{}, errors.New("bad signature")
	}
	var c struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		IAT   int64  `json:"iat"`
		ATH   string `json:"ath"`
		Nonce string `json:"nonce"`
	}
	if json.Unmarshal(payload, &c) != nil || c.JTI == "" || c.HTM != r.Method || c.HTU != htu ||
		time.Since(time.Unix(c.IAT, 0)).Abs() > time.Minute {
		return Proof{}, errors.New("wrong claims")
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return Proof{}, errors.New("wrong ath")
		}
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return Proof{}, err
	}
	return Proof{JKT: base64.RawURLEncoding.EncodeToString(tp), JTI: c.JTI, Nonce: c.Nonce}, nil
}

// checkProof is CheckProof with this server's replay and nonce rules. It
// returns the key's thumbprint, or the OAuth error code to answer.
func (s *Server) checkProof(r *http.Request, htu, token string) (string, string) {
	p, err := CheckProof(r, htu, token)
	if err != nil || s.jtis[p.JTI] {
		return "", "invalid_dpop_proof"
	}
	s.jtis[p.JTI] = true
	if s.opts.DPoPNonce && p.Nonce != s.nonce {
		return "", "use_dpop_nonce"
	}
	return p.JKT, ""
}

// rotateNonceLocked hands out a new nonce now and then, as servers do.
func (s *Server) rotateNonceLocked() {
	if s.nonce == "" || time.Since(s.nonceAt) > dpopNonceLife {
		s.nonce, s.nonceAt = "n-"+strings.ReplaceAll(time.Now().Format(time.RFC3339Nano), ":", ""), time.Now()
	}
}

// machineGrant answers the client_credentials and jwt-bearer grants: the
// client (authenticated already, as id) gets a token for resource.
func (s *Server) machineGrant(r *http.Request, id string) (grant, string) {
	f := r.PostForm
	switch f.Get("grant_type") {
	case "client_credentials":
		if !s.opts.ClientCredentials {
			return grant{}, "unsupported_grant_type"
		}
		s.ClientCredentials.Add(1)
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if s.opts.WorkloadKey == nil {
			return grant{}, "unsupported_grant_type"
		}
		c, err := checkAssertion(f.Get("assertion"), s.opts.WorkloadKey, s.URL)
		if err != nil {
			return grant{}, "invalid_grant"
		}
		sub, _ := c["sub"].(string)
		id = sub
		s.JWTBearers.Add(1)
	default:
		return grant{}, "unsupported_grant_type"
	}
	return grant{client: id, scopes: strings.Fields(f.Get("scope")), resource: f.Get("resource")}, ""
}

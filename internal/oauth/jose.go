package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// parsePrivateKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1
// RSA). The error never quotes the key.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("the private key is not PEM")
	}
	var k any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("the private key's PEM block is %q, not a private key", printable(b.Type))
	}
	if err != nil {
		return nil, errors.New("the private key's PEM block does not hold a valid key")
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("the private key cannot sign")
	}
	return s, nil
}

// defaultAlg is the JWS algorithm a key signs with unless told otherwise.
func defaultAlg(k crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch p := k.Public().(type) {
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", errors.New("the private key's type is not one JWS signs with (EC P-256/384/521, RSA, Ed25519)")
}

// signJWT signs claims as a compact JWS. typ, if set, is the header's typ;
// embedJWK puts the public key in the header (DPoP proofs).
func signJWT(k crypto.Signer, alg jose.SignatureAlgorithm, typ string, embedJWK bool, claims map[string]any) (string, error) {
	opts := &jose.SignerOptions{EmbedJWK: embedJWK}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, opts)
	if err != nil {
		return "", fmt.Errorf("preparing a JWS signer: %w", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := s.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("signing a JWT: %w", err)
	}
	return obj.CompactSerialize()
}

// clientAssertion is the private_key_jwt client authentication of RFC 7523
// §2.2 and §3: issuer and subject are the client, the audience is the
// authorization server's issuer identifier (RFC 7523bis and the MCP client
// credentials extension name the issuer, not the token endpoint).
func clientAssertion(k crypto.Signer, alg string, clientID, audience string, now time.Time) (string, error) {
	a := jose.SignatureAlgorithm(alg)
	if a == "" {
		var err error
		if a, err = defaultAlg(k); err != nil {
			return "", err
		}
	}
	return signJWT(k, a, "", false, map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"jti": rand.Text(),
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
	})
}

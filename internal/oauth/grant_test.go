package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// noLeak fails if canary shows in oauth.json, the status or err.
func noLeak(t *testing.T, home string, m *oauth.Manager, server, canary string, err error) {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(home, oauth.FileName))
	st, _ := json.Marshal(m.Status(server))
	for where, s := range map[string]string{"oauth.json": string(data), "status": string(st)} {
		if strings.Contains(s, canary) {
			t.Errorf("the secret leaked into %s", where)
		}
	}
	if err != nil && strings.Contains(err.Error(), canary) {
		t.Errorf("the secret leaked into an error: %v", err)
	}
}

func TestClientCredentialsWithSecret(t *testing.T) {
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		t.Run(method, func(t *testing.T) {
			const secret = "CANARY-cc-secret-91b2"
			as := authserver.Start(t, authserver.Options{NoDCR: true, ClientCredentials: true, Clients: map[string]string{"m2m": secret}})
			home := t.TempDir()
			var c clock
			m := open(t, home, &c, nil)
			p := oauth.LoginParams{Server: "srv", URL: as.MCPURL,
				Grant: &oauth.Grant{Type: oauth.GrantClientCredentials, ClientID: "m2m", ClientSecret: secret, AuthMethod: method}}
			m.SetGrant(p)
			// No login: the first request obtains the token.
			if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
				t.Fatalf("call with client credentials: %v", err)
			}
			if n := as.ClientCredentials.Load(); n != 1 {
				t.Fatalf("client_credentials requests = %d, want 1", n)
			}
			tq := as.LastTokenRequest()
			if tq.Get("resource") != as.MCPURL || (method == "client_secret_post") != (tq.Get("client_secret") == secret) {
				t.Errorf("token request: grant %q resource %q, secret in the form: %v", tq.Get("grant_type"), tq.Get("resource"), tq.Has("client_secret"))
			}
			if st := m.Status("srv"); !st.LoggedIn || st.NeedsLogin {
				t.Errorf("status: %+v", st)
			}
			// Expiry: the daemon fetches a new token the same way.
			c.advance(2 * time.Hour)
			if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
				t.Fatalf("call after expiry: %v", err)
			}
			if n := as.ClientCredentials.Load(); n != 2 {
				t.Fatalf("client_credentials requests after expiry = %d, want 2", n)
			}
			noLeak(t, home, m, "srv", secret, nil)
		})
	}
}

func TestClientCredentialsRefusedIsNotRetried(t *testing.T) {
	const secret = "CANARY-wrong-secret-4410"
	as := authserver.Start(t, authserver.Options{NoDCR: true, ClientCredentials: true, Clients: map[string]string{"m2m": "right"}})
	home := t.TempDir()
	var c clock
	m := open(t, home, &c, nil)
	m.SetGrant(oauth.LoginParams{Server: "srv", URL: as.MCPURL,
		Grant: &oauth.Grant{Type: oauth.GrantClientCredentials, ClientID: "m2m", ClientSecret: secret}})
	_, err := m.AccessToken(context.Background(), "srv")
	var te *oauth.TokenError
	if !errors.As(err, &te) || te.Code != "invalid_client" {
		t.Fatalf("a wrong secret: %v", err)
	}
	if st := m.Status("srv"); !st.NeedsLogin || !strings.Contains(st.Reason, "invalid_client") {
		t.Errorf("status after a refusal: %+v", st)
	}
	_, err2 := m.AccessToken(context.Background(), "srv")
	if !errors.Is(err2, oauth.ErrNeedsLogin) {
		t.Errorf("second attempt: %v, want ErrNeedsLogin", err2)
	}
	if n := as.TokenRequests.Load(); n != 1 {
		t.Errorf("token requests = %d, want 1: a refused grant is not asked again", n)
	}
	noLeak(t, home, m, "srv", secret, err)
	noLeak(t, home, m, "srv", secret, err2)
}

func ecKey(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestClientCredentialsWithPrivateKeyJWT(t *testing.T) {
	k, pemKey := ecKey(t)
	as := authserver.Start(t, authserver.Options{NoDCR: true, ClientCredentials: true,
		ClientKeys: map[string]crypto.PublicKey{"signer": &k.PublicKey}})
	home := t.TempDir()
	var c clock
	m := open(t, home, &c, nil)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	m.SetGrant(oauth.LoginParams{Server: "srv", URL: as.MCPURL,
		Grant: &oauth.Grant{Type: oauth.GrantClientCredentials, ClientID: "signer", PrivateKeyFile: keyFile}})
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call with private_key_jwt: %v", err)
	}
	tq := as.LastTokenRequest()
	if tq.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || tq.Has("client_secret") {
		t.Errorf("token request: %v", tq)
	}
	// The PEM key is not copied into oauth.json.
	noLeak(t, home, m, "srv", strings.Split(string(pemKey), "\n")[1], nil)

	// Another key is refused.
	_, other := ecKey(t)
	m2 := open(t, t.TempDir(), &c, nil)
	m2.SetGrant(oauth.LoginParams{Server: "srv", URL: as.MCPURL,
		Grant: &oauth.Grant{Type: oauth.GrantClientCredentials, ClientID: "signer", PrivateKey: other}})
	if _, err := m2.AccessToken(context.Background(), "srv"); err == nil {
		t.Fatal("an assertion signed by another key was accepted")
	}
}

func TestWorkloadJWTBearerFromFile(t *testing.T) {
	k, _ := ecKey(t)
	as := authserver.Start(t, authserver.Options{NoDCR: true, WorkloadKey: &k.PublicKey})
	sign := func(aud string) string {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"iss": "https://k8s.example", "sub": "system:serviceaccount:ns:app", "aud": aud,
			"exp": time.Now().Add(time.Hour).Unix()})
		obj, err := s.Sign(b)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := obj.CompactSerialize()
		return out
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(sign("https://wrong.example")+"\n"), 0o600)
	home := t.TempDir()
	var c clock
	m := open(t, home, &c, nil)
	p := oauth.LoginParams{Server: "srv", URL: as.MCPURL, Grant: &oauth.Grant{Type: oauth.GrantJWTBearer, AssertionFile: tokenFile}}
	m.SetGrant(p)
	if _, err := m.AccessToken(context.Background(), "srv"); err == nil {
		t.Fatal("a JWT for another audience was accepted")
	}
	// The platform rotates the file; a new grant setting (a restart, or
	// plexus login) tries again with what the file holds now.
	os.WriteFile(tokenFile, []byte(sign(as.URL)), 0o600)
	m.SetGrant(p)
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call with the workload's JWT: %v", err)
	}
	if n := as.JWTBearers.Load(); n != 1 {
		t.Errorf("jwt-bearer grants = %d, want 1", n)
	}
	os.WriteFile(tokenFile, []byte("not a jwt"), 0o600)
	m3 := open(t, t.TempDir(), &c, nil)
	m3.SetGrant(p)
	if _, err := m3.AccessToken(context.Background(), "srv"); err == nil || !strings.Contains(err.Error(), "does not hold a JWT") || strings.Contains(err.Error(), "not a jwt") {
		t.Errorf("a token file without a JWT: %v", err)
	}
}

package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestEnterpriseTokenExchange runs enterprise-managed authorization: the ID
// token is exchanged at an identity provider (RFC 8693) for an ID-JAG,
// which the server's authorization server takes as a JWT bearer grant.
func TestEnterpriseTokenExchange(t *testing.T) {
	const idToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.CANARY-id-token"
	k, _ := ecKey(t)
	as := authserver.Start(t, authserver.Options{NoDCR: true, WorkloadKey: &k.PublicKey, Clients: map[string]string{"app": "app-secret"}})
	var exchanges atomic.Int64
	var tokenType atomic.Value
	tokenType.Store("N_A")
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := r.PostForm
		if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || f.Get("subject_token") != idToken ||
			f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" ||
			f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" ||
			f.Get("audience") != as.URL || f.Get("resource") != as.MCPURL || f.Get("client_id") != "idp-client" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_request"}`))
			return
		}
		exchanges.Add(1)
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, (&jose.SignerOptions{}).WithType("oauth-id-jag+jwt"))
		b, _ := json.Marshal(map[string]any{"iss": "idp", "sub": "alice", "aud": f.Get("audience"), "resource": f.Get("resource"),
			"client_id": "app", "exp": time.Now().Add(5 * time.Minute).Unix()})
		obj, _ := s.Sign(b)
		jag, _ := obj.CompactSerialize()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": tokenType.Load().(string)})
	}))
	t.Cleanup(idp.Close)
	idFile := filepath.Join(t.TempDir(), "id-token")
	os.WriteFile(idFile, []byte(idToken), 0o600)
	home := t.TempDir()
	var c clock
	m := open(t, home, &c, nil)
	p := oauth.LoginParams{Server: "srv", URL: as.MCPURL, Grant: &oauth.Grant{Type: oauth.GrantTokenExchange, ClientID: "app", ClientSecret: "app-secret",
		IDP: &oauth.IdentityProvider{TokenURL: idp.URL, ClientID: "idp-client", IDTokenFile: idFile}}}
	m.SetGrant(p)
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call with an exchanged ID-JAG: %v", err)
	}
	if exchanges.Load() != 1 || as.JWTBearers.Load() != 1 {
		t.Fatalf("exchanges %d, jwt-bearer grants %d; want 1 and 1", exchanges.Load(), as.JWTBearers.Load())
	}
	if tq := as.LastTokenRequest(); tq.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || tq.Get("resource") != as.MCPURL {
		t.Errorf("token request at the authorization server: %v", tq)
	}
	noLeak(t, home, m, "srv", "CANARY-id-token", nil)

	// An identity provider that hands back an access token instead of an
	// ID-JAG is refused (RFC 8693 §2.2.1: token_type N_A for an assertion).
	tokenType.Store("Bearer")
	m2 := open(t, t.TempDir(), &c, nil)
	m2.SetGrant(p)
	_, err := m2.AccessToken(context.Background(), "srv")
	if err == nil || !strings.Contains(err.Error(), "N_A") {
		t.Fatalf("a token_type other than N_A: %v", err)
	}
}

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestOAuthClientCredentialsServer adds a machine-to-machine server from the
// CLI with a DPoP-binding authorization server: no browser, the daemon gets
// and renews its token, a restart keeps the DPoP key, a revocation is
// mended by `plexus login`, and the client secret shows nowhere.
func TestOAuthClientCredentialsServer(t *testing.T) {
	t.Parallel()
	const secret = "CANARY-m2m-secret-55e1"
	as := authserver.Start(t, authserver.Options{NoDCR: true, ClientCredentials: true, DPoP: true, DPoPNonce: true,
		Clients: map[string]string{"plexus-m2m": secret}})
	e := testenv.New(t)
	e.ExtraEnv = []string{"M2M_SECRET=" + secret}
	e.StartDaemon()

	r := e.Run("", "add", "m2m", as.MCPURL, "--oauth-grant", "client_credentials", "--client-id", "plexus-m2m", "--client-secret-env", "M2M_SECRET")
	if r.Code != 0 {
		t.Fatalf("add: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	st := waitState(t, e, "m2m", "ready", 20*time.Second)
	if st.Auth == nil || !st.Auth.LoggedIn || st.Auth.NeedsLogin || st.Auth.Issuer != as.URL {
		t.Fatalf("status after add: %+v", st.Auth)
	}
	callEcho(t, e, "m2m")
	if n := as.ClientCredentials.Load(); n < 1 {
		t.Fatal("no client_credentials grant reached the authorization server")
	}
	raw, _ := os.ReadFile(filepath.Join(e.Home, "oauth.json"))
	if !strings.Contains(string(raw), `"dpopKey"`) {
		t.Error("oauth.json holds no DPoP key")
	}

	e.StopDaemon()
	e.StartDaemon()
	waitState(t, e, "m2m", "ready", 20*time.Second)
	callEcho(t, e, "m2m")

	as.Revoke()
	before := as.ClientCredentials.Load()
	lr := e.Run("", "login", "m2m")
	if lr.Code != 0 || !strings.Contains(lr.Stdout, "client_credentials grant") {
		t.Fatalf("login: %d\n%s\n%s", lr.Code, lr.Stdout, lr.Stderr)
	}
	if as.ClientCredentials.Load() <= before {
		t.Fatal("login did not obtain a new token")
	}
	waitState(t, e, "m2m", "ready", 20*time.Second)
	callEcho(t, e, "m2m")

	cfg, _ := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	raw, _ = os.ReadFile(filepath.Join(e.Home, "oauth.json"))
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	for what, text := range map[string]string{
		"extensions.json": string(cfg), "oauth.json": string(raw), "logs.jsonl": string(logs),
		"status": e.MustRun("status", "--json"), "ls": e.MustRun("ls", "--json"), "daemon output": e.DaemonOutput(),
		"add": r.Stdout + r.Stderr, "login": lr.Stdout + lr.Stderr,
	} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the client secret", what)
		}
	}
	if !strings.Contains(string(cfg), `"M2M_SECRET"`) || !strings.Contains(string(cfg), `"client_credentials"`) {
		t.Errorf("extensions.json does not name the grant and the secret's variable:\n%s", cfg)
	}
}

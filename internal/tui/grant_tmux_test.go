package tui

import (
	"crypto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestTerminalOAuthGrants adds two machine-to-machine servers in the real
// terminal through the form's OAuth rows, against an authorization server
// of machine clients: client credentials with a client secret typed
// masked, and private_key_jwt with a PEM key pasted (bracketed paste, its
// lines turned into spaces by the field). Both start with the tokens the
// daemon got; the edit form shows the grant and the client but only that
// a secret is stored; neither secret ever reaches the screen, and
// extensions.json names them.
func TestTerminalOAuthGrants(t *testing.T) {
	needTmux(t)
	const secret = "CANARY-tui-client-secret-7be1"
	key, keyPEM := testenv.ClientKey(t)
	keyLine := strings.Split(keyPEM, "\n")[1]
	as := authserver.Start(t, authserver.Options{NoDCR: true, ClientCredentials: true,
		Clients: map[string]string{"plexus-tui": secret}, ClientKeys: map[string]crypto.PublicKey{"plexus-tui-key": key.Public()}})
	e := testenv.New(t)
	e.StartDaemon()
	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "120", "-y", "40", "env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	var screens []string
	keys := func(k ...string) { x.must(append([]string{"send-keys", "-t", "tui"}, k...)...) }
	typed := func(s string) { keys("-l", s) }
	seen := func(texts ...string) { screens = append(screens, x.waitText(texts...)) }

	seen("No servers yet")
	keys("n")
	seen("new server", "[http]", "oauth grant", "[browser login]")
	typed(as.MCPURL)
	keys("Tab", "C-u")
	typed("m2m")
	keys("Tab", "Tab", "Tab", "Tab", "Right")
	seen("[client_credentials]", "client auth", "[default]")
	keys("Tab")
	typed("plexus-tui")
	keys("Tab", "Right", "Right")
	seen("[client_secret_post]")
	keys("Tab")
	typed(secret)
	seen("client secret " + strings.Repeat("•", len(secret)))
	keys("C-s")
	seen("added m2m (ready")

	keys("Enter")
	seen("edit m2m", "[client_credentials]", "plexus-tui", "[client_secret_post]", "stored: blank keeps it, - removes it")
	keys("C-s")
	seen("saved m2m (ready")

	keys("n")
	seen("new server", "[http]")
	typed(as.MCPURL)
	keys("Tab", "C-u")
	typed("m2mkey")
	keys("Tab", "Tab", "Tab", "Tab", "Right", "Tab")
	typed("plexus-tui-key")
	keys("Tab", "Left")
	seen("[private_key_jwt]", "private key", "key file")
	keys("Tab")
	pemFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(pemFile, []byte(keyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	x.must("load-buffer", "-b", "pem", pemFile)
	x.must("paste-buffer", "-p", "-b", "pem", "-t", "tui")
	seen("private key   ••••")
	keys("C-s")
	seen("added m2mkey (ready")

	ext, creds := files(t, e.Home)
	for _, want := range []string{`"grant": "client_credentials"`, `"M2M_CLIENT_SECRET"`, `"M2MKEY_PRIVATE_KEY"`, `"private_key_jwt"`, `"client_secret_post"`} {
		if !strings.Contains(ext, want) {
			t.Errorf("extensions.json lacks %s:\n%s", want, ext)
		}
	}
	if strings.Contains(ext, secret) || strings.Contains(ext, keyLine) {
		t.Fatalf("a secret is in extensions.json:\n%s", ext)
	}
	if !strings.Contains(creds, secret) || !strings.Contains(creds, keyLine) {
		t.Fatal("creds.json lacks the secrets typed and pasted into the form")
	}
	for _, s := range screens {
		if strings.Contains(s, secret) || strings.Contains(s, keyLine[:20]) {
			t.Fatalf("the terminal showed a secret:\n%s", s)
		}
	}
	if as.ClientCredentials.Load() < 2 {
		t.Fatalf("the authorization server answered %d client_credentials grants", as.ClientCredentials.Load())
	}
}

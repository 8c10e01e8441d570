package host

import (
	"errors"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
)

// TestFormSecrets: secrets typed into a server's form are saved with it,
// a blank field keeps the stored value, "-" removes it, and deleting the
// server deletes them (R-API-2, R-API-3).
func TestFormSecrets(t *testing.T) {
	th := newTestHost(t)
	const canary = "canary-form-secret-3b1f"
	cfg := th.example(map[string]any{"env": map[string]any{"TOKEN": map[string]string{"env": "EX_TOKEN"}}})

	if _, err := th.PutServer(t.Context(), PutRequest{Name: "ex", Config: cfg, Create: true,
		Secrets: map[string]string{"EX_TOKEN": canary}}); err != nil {
		t.Fatal(err)
	}
	c := th.st.Creds()
	if c.Env["EX_TOKEN"] != canary || c.Owners["EX_TOKEN"] != "ex" {
		t.Fatalf("after add: env %v owners %v", c.Names(), c.Owners)
	}
	if strings.Contains(string(th.configFile()), canary) {
		t.Fatal("the secret is in extensions.json")
	}

	// A blank field keeps the stored value, through an edit that restarts.
	edited := th.example(map[string]any{"callTimeoutMs": 5000, "env": map[string]any{"TOKEN": map[string]string{"env": "EX_TOKEN"}}})
	rev, err := th.PutServer(t.Context(), PutRequest{Name: "ex", Config: edited, Secrets: map[string]string{"EX_TOKEN": ""}})
	if err != nil {
		t.Fatal(err)
	}
	if th.st.Creds().Env["EX_TOKEN"] != canary {
		t.Fatal("a blank field did not keep the stored secret")
	}

	// "-" removes it; the server still references it, so the save is
	// refused and nothing changes.
	before, credsBefore := th.configFile(), th.st.Creds()
	_, err = th.PutServer(t.Context(), PutRequest{Name: "ex", Config: th.example(map[string]any{"callTimeoutMs": 6000, "env": map[string]any{"TOKEN": map[string]string{"env": "EX_TOKEN"}}}),
		Secrets: map[string]string{"EX_TOKEN": "-"}})
	var missing *config.MissingVarError
	if !errors.As(err, &missing) || missing.Name != "EX_TOKEN" {
		t.Fatalf("removing a referenced secret = %v, want a missing variable error", err)
	}
	th.settingsUnchanged(rev, before, "")
	if got := th.st.Creds(); got.Revision != credsBefore.Revision || got.Env["EX_TOKEN"] != canary {
		t.Fatal("a refused save changed the secrets")
	}

	// A field for a variable the server does not reference is refused.
	if _, err := th.PutServer(t.Context(), PutRequest{Name: "ex", Config: edited, Secrets: map[string]string{"OTHER": "x"}}); err == nil || !strings.Contains(err.Error(), "not referenced") {
		t.Fatalf("unreferenced secret = %v", err)
	}

	// Deleting the server deletes its secret; a shared one stays.
	if _, err := th.SetSecret("SHARED", "s", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := th.DeleteServer("ex", 0); err != nil {
		t.Fatal(err)
	}
	c = th.st.Creds()
	if _, ok := c.Env["EX_TOKEN"]; ok {
		t.Fatal("the server's own secret survived its deletion")
	}
	if _, ok := c.Env["SHARED"]; !ok {
		t.Fatal("a shared secret was deleted with a server")
	}
}

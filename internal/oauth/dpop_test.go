package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// storedDPoPKeys reads the DPoP keys oauth.json holds.
func storedDPoPKeys(t *testing.T, home string) []string {
	t.Helper()
	path := filepath.Join(home, oauth.FileName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("oauth.json: %v %v", fi, err)
	}
	data, _ := os.ReadFile(path)
	var f struct {
		Logins map[string]struct {
			DPoPKey string `json:"dpopKey"`
		} `json:"logins"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range f.Logins {
		keys = append(keys, e.DPoPKey)
	}
	return keys
}

func TestDPoPWithNoncesThroughLoginRefreshAndRestart(t *testing.T) {
	as := authserver.Start(t, authserver.Options{DPoP: true, DPoPNonce: true, AccessTTL: 20 * time.Second})
	home := t.TempDir()
	var c clock
	// The next use refreshes the token first (it is 11 s into its 20 s,
	// end): the bound refresh token must come with a proof of the same key.
	refreshAlways := func(o *oauth.Options) { o.RefreshBefore = 3 * time.Minute }
	m := open(t, home, &c, refreshAlways)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	keys := storedDPoPKeys(t, home)
	if len(keys) != 1 || !strings.Contains(keys[0], "PRIVATE KEY") {
		t.Fatalf("oauth.json holds no DPoP key: %v", keys)
	}
	c.advance(11 * time.Second)
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call with a DPoP token: %v", err)
	}
	if as.Refreshes.Load() == 0 {
		t.Error("no refresh happened")
	}
	hdrs := as.AuthorizationHeaders()
	for _, h := range hdrs {
		if h != "" && !strings.HasPrefix(h, "DPoP ") {
			t.Errorf("an MCP request carried %q…, not the DPoP scheme", h[:min(len(h), 12)])
		}
	}
	// A restart reads the same key: the bound tokens stay usable. Its
	// first request has no nonce of the MCP server yet: the answer
	// use_dpop_nonce is retried once with the nonce, within the request.
	m2 := open(t, home, &c, refreshAlways)
	if code := initializeStatus(t, m2.Transport("srv", as.MCPURL, nil), as.MCPURL); code != http.StatusOK {
		t.Fatalf("the first request after a restart: HTTP %d", code)
	}
	if err := callEcho(t, m2, "srv", as.MCPURL); err != nil {
		t.Fatalf("call after restart: %v", err)
	}
	if k := storedDPoPKeys(t, home); len(k) != 1 || k[0] != keys[0] {
		t.Error("the DPoP key changed across a restart")
	}
	// A new login at the same issuer keeps the key.
	login(t, m2, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if k := storedDPoPKeys(t, home); k[0] != keys[0] {
		t.Error("a new login made a new DPoP key")
	}
}

func TestDPoPTokenIsNotSentAsBearer(t *testing.T) {
	// Without nonces; the bound token alone, sent as a bearer token by
	// someone who took it, is refused.
	as := authserver.Start(t, authserver.Options{DPoP: true})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call: %v", err)
	}
	tok, err := m.AccessToken(context.Background(), "srv")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, as.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a DPoP-bound token sent as a bearer token: HTTP %d", resp.StatusCode)
	}
}

// initializeStatus sends one initialize request through rt.
func initializeStatus(t *testing.T, rt http.RoundTripper, mcpURL string) int {
	t.Helper()
	code, err := initialize(rt, mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// initialize sends one initialize request through rt.
func initialize(rt http.RoundTripper, mcpURL string) (int, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

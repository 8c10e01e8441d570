package importer

import (
	"maps"
	"slices"
	"testing"
)

// TestImportJudgesSecrets: a literal moves to the secret store when its
// name or its shape says secret; settings stay plain values, visible.
func TestImportJudgesSecrets(t *testing.T) {
	res := parseOK(t, Claude, `{"mcpServers": {"s": {"command": "x", "env": {
		"DEBUG": "1", "EMPTY": "", "LOG_LEVEL": "info", "VERBOSE": "true",
		"ROOT": "/home/me/projects/some-long-folder-name-2024",
		"SITE": "https://example.com/docs/v2",
		"TEAM_ID": "T01234567",
		"API_KEY": "CANARY-name-1",
		"AUTH_HEADER": "CANARY-name-2",
		"DB_PASSWORD": "CANARY-name-3",
		"DATABASE_URL": "postgres://app:CANARY-dsn@db.local:5432/app",
		"HEADERS": "{\"Authorization\": \"Bearer CANARYCANARY123\"}",
		"SEED": "aZ3kQ9xP7mW2vR8tL5nB4cY6",
		"GH": "ghp_CANARYCANARYCANARY12",
		"HOOK": "https://hooks.example.com/x?sig=CANARY-sig"}},
	  "h": {"url": "https://h.example.com/mcp", "headers": {"X-Team": "blue", "X-Api-Key": "CANARY-header", "Authorization": "Bearer CANARY-bearer"}}}}`)
	plain := map[string]string{}
	for k, r := range res.Servers["s"].Env {
		if r.IsPlain() {
			plain[k] = *r.Value
		}
	}
	wantPlain := map[string]string{"DEBUG": "1", "EMPTY": "", "LOG_LEVEL": "info", "VERBOSE": "true",
		"ROOT": "/home/me/projects/some-long-folder-name-2024", "SITE": "https://example.com/docs/v2", "TEAM_ID": "T01234567"}
	if !maps.Equal(plain, wantPlain) {
		t.Errorf("plain values %v, want %v", plain, wantPlain)
	}
	wantSecret := []string{"S_API_KEY", "S_AUTH_HEADER", "S_DATABASE_URL", "S_DB_PASSWORD", "S_GH", "S_HEADERS", "S_HOOK", "S_SEED", "H_X_API_KEY", "H_BEARER_TOKEN"}
	slices.Sort(wantSecret)
	if got := slices.Sorted(maps.Keys(res.Secrets)); !slices.Equal(got, wantSecret) {
		t.Errorf("secrets %v, want %v", got, wantSecret)
	}
	h := res.Servers["h"]
	if v := h.Headers["X-Team"]; v.Text != "blue" || v.Env != "" {
		t.Errorf("X-Team = %+v, want the text blue", v)
	}
	if h.BearerTokenEnvVar != "H_BEARER_TOKEN" {
		t.Errorf("bearer = %q", h.BearerTokenEnvVar)
	}
}

// TestImportRelativeCwd: a relative cwd is the file's folder's, as the
// other client read it.
func TestImportRelativeCwd(t *testing.T) {
	content := []byte(`{"mcpServers": {"a": {"command": "x", "cwd": "tools/srv"}, "b": {"command": "x", "cwd": "/abs"}}}`)
	res, err := ParseIn(Claude, content, "/home/me/proj", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res)
	if got := res.Servers["a"].Cwd; got != "/home/me/proj/tools/srv" {
		t.Errorf("a.cwd = %q, want /home/me/proj/tools/srv", got)
	}
	if got := res.Servers["b"].Cwd; got != "/abs" {
		t.Errorf("b.cwd = %q, want /abs", got)
	}
}

func TestSecretWhy(t *testing.T) {
	for _, tc := range []struct {
		key, val string
		secret   bool
	}{
		{"GITHUB_TOKEN", "", false},
		{"GITHUB_TOKEN", "1", false},
		{"SOME_KEY", "true", false},
		{"GITHUB_TOKEN", "abcd1234", true},
		{"X", "Bearer abcdefgh", true},
		{"X", "mysql://u:pw@h/db", true},
		{"X", "mysql://u@h/db", false},
		{"PORT", "8080", false},
		{"MODE", "production", false},
		{"X", "4f9a8c7e2b1d6f3a0e5c9b8a7d6e5f4c", true},
		{"X", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", false},
		{"X", "some-perfectly-normal-kebab-name-v2", false},
	} {
		if got := secretWhy(tc.key, tc.val) != ""; got != tc.secret {
			t.Errorf("secretWhy(%q, %q) = %q, want secret=%v", tc.key, tc.val, secretWhy(tc.key, tc.val), tc.secret)
		}
	}
}

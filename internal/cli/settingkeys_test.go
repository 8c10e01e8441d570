package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

const settingsJSON = `{"revision": 3, "callTimeoutMs": 0, "retryMs": 0,
	"face": {"allowExternalCall": false, "allowWrite": false}, "profiles": {"fs": {"servers": ["fs"]}, "docs": {}}}`

// TestCompleteSettingKeys completes the KEY of settings get, set and unset
// with the settings API's keys and the daemon's profiles, as a shell's
// script calls cobra's __complete.
func TestCompleteSettingKeys(t *testing.T) {
	startFake(t, map[string]reply{"GET /v1/settings": {200, settingsJSON}})
	all := []string{"callTimeoutMs", "retryMs", "oauthClientMetadataUrl", "face.allowExternalCall", "face.allowWrite", "face.sessionIdleMs", "face.maxSessions", "registry.url", "names", "tracing.enabled", "tracing.protocol", "policy.rules", "policy.limits", "audit.enabled", "audit.otlp"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"settings", "get", ""}, append(slices.Clone(all), "profiles.docs", "profiles.fs")},
		{[]string{"settings", "set", "pol"}, []string{"policy.limits", "policy.rules"}},
		{[]string{"settings", "set", "face.a"}, []string{"face.allowExternalCall", "face.allowWrite"}},
		{[]string{"settings", "unset", "profiles."}, []string{"profiles.docs", "profiles.fs"}},
		{[]string{"settings", "set", "retryMs", ""}, nil},
	} {
		r := run(t, "", append([]string{"__complete"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		got := lines[:len(lines)-1]
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if r.code != 0 || strings.Join(got, "|") != strings.Join(want, "|") || lines[len(lines)-1] != ":4" {
			t.Errorf("%v: exit %d, got %q, want %q; stderr %s", tc.args, r.code, got, want, r.stderr)
		}
	}
}

// TestSettingKeysAreTheAPIs: every key read off apitype.Settings is one
// `plexus settings` reads and writes, and a JSON field the API gains
// becomes a key (the list is not written by hand).
func TestSettingKeysAreTheAPIs(t *testing.T) {
	if !slices.Contains(settingKeys, "face.maxSessions") || !slices.Contains(settingKeys, "profiles.NAME") || slices.Contains(settingKeys, "revision") {
		t.Fatalf("keys: %v", settingKeys)
	}
	for _, k := range settingKeys {
		if k == "profiles.NAME" {
			k = "profiles.x"
		}
		s := &apitype.Settings{}
		value := "7"
		switch {
		case strings.HasPrefix(k, "face.allow"), k == "tracing.enabled", strings.HasPrefix(k, "audit."):
			value = "true"
		case strings.HasPrefix(k, "profiles."):
			value = `{"servers": ["a"]}`
		case k == "policy.rules":
			value = `[{"tool": "a_*", "action": "deny"}]`
		case k == "policy.limits":
			value = `[{"calls": 7, "windowMs": 1000}]`
		}
		if err := checkSettingKey(k); err != nil {
			t.Errorf("%s: refused: %v", k, err)
			continue
		}
		if err := applySetting(s, k, value, true); err != nil {
			t.Errorf("%s = %s: %v", k, value, err)
			continue
		}
		if v, raw := settingValue(s, k); raw == nil || !strings.Contains(v, strings.Trim(value, `[{}" `)[:1]) {
			t.Errorf("%s: set %s, read back %q", k, value, v)
		}
	}
}

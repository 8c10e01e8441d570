package config

import (
	"strings"
	"testing"
)

// TestClientMetadataURL: mcp.oauthClientMetadataUrl is an https URL with a
// path (http only on localhost) and no query: it is Plexus's client_id at
// the authorization servers that fetch it.
func TestClientMetadataURL(t *testing.T) {
	for _, tc := range []struct {
		url, want string
	}{
		{"https://plexus.example/oauth/client.json", ""},
		{"http://127.0.0.1:8443/client.json", ""},
		{"http://plexus.example/client.json", "https"},
		{"https://plexus.example", "path"},
		{"https://plexus.example/", "path"},
		{"https://plexus.example/c.json?v=1", "query"},
		{"https://user:pw@plexus.example/c.json", "userinfo"},
		{"https://plexus.example/c.json#x", "fragment"},
		{"ftp://plexus.example/c.json", "https://"},
	} {
		err := CheckClientMetadataURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error about %s", tc.url, err, tc.want)
		}
	}
	f := &File{MCP: MCP{OAuthClientMetadataURL: "http://plexus.example/c.json"}}
	if err := Validate(f); err == nil || !strings.Contains(err.Error(), "mcp.oauthClientMetadataUrl") {
		t.Errorf("a bad document URL in the file: %v", err)
	}
}

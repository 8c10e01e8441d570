package oauth

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMemberEntriesAreKeptApart: a member's login is kept beside the
// server's own, under a key of its own, and a login filed under another
// account's key is refused rather than used.
func TestMemberEntriesAreKeptApart(t *testing.T) {
	own := &entry{Server: "gh", Issuer: "https://as", Resource: "https://r/mcp", Token: &token{Access: "daemon"}}
	ada := &entry{Server: Account("gh", "ada"), Issuer: "https://as", Resource: "https://r/mcp", Token: &token{Access: "ada"}}
	f := &file{Version: fileVersion, Logins: map[string]*entry{own.Server: own, ada.Server: ada}}
	data, err := json.MarshalIndent(f, "", "  ") // as the store writes it
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Logins["gh"]; e == nil || e.Token.Access != "daemon" {
		t.Errorf("the server's own login: %+v", e)
	}
	if e := got.Logins[Account("gh", "ada")]; e == nil || e.Token.Access != "ada" {
		t.Errorf("ada's login: %+v", e)
	}
	if e := got.Logins[Account("gh", "bob")]; e != nil {
		t.Error("bob has ada's or the server's login")
	}
	if s, u := SplitAccount(Account("gh", "ada")); s != "gh" || u != "ada" {
		t.Errorf("SplitAccount = %q, %q", s, u)
	}
	// ada's login filed under the server's own key.
	forged := `{"version": 2, "logins": {"gh": {"server": "gh\u0000ada", "issuer": "https://as", "resource": "https://r/mcp", "client": {"id": "c", "kind": "dynamic"}}}}`
	if _, err := decodeFile([]byte(forged)); err == nil || !strings.Contains(err.Error(), "does not match its key") {
		t.Errorf("a login under another account's key: %v", err)
	}
}

// TestVersion1IsMigrated: the store of a daemon before logins were kept
// by account (one entry per issuer and resource) is read as logins by
// server, member logins included; an entry filed under the wrong key is
// still refused.
func TestVersion1IsMigrated(t *testing.T) {
	v1 := `{"version": 1, "entries": {
	  "https://as https://r/mcp": {"server": "gh", "issuer": "https://as", "resource": "https://r/mcp", "authUrl": "https://as/a", "tokenUrl": "https://as/t", "client": {"id": "c", "kind": "dynamic"}, "token": {"access": "a1", "refresh": "r1", "type": "Bearer"}},
	  "https://as https://r/mcp ada": {"server": "gh\u0000ada", "issuer": "https://as", "resource": "https://r/mcp", "authUrl": "https://as/a", "tokenUrl": "https://as/t", "client": {"id": "c", "kind": "dynamic"}, "token": {"access": "a2"}}
	}}`
	f, err := decodeFile([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != fileVersion || len(f.Logins) != 2 || f.Logins["gh"].Token.Refresh != "r1" || f.Logins[Account("gh", "ada")].Token.Access != "a2" {
		t.Fatalf("migrated: %+v", f.Logins)
	}
	bad := `{"version": 1, "entries": {"https://as https://r/mcp": {"server": "gh\u0000ada", "issuer": "https://as", "resource": "https://r/mcp", "client": {"id": "c", "kind": "dynamic"}}}}`
	if _, err := decodeFile([]byte(bad)); err == nil || !strings.Contains(err.Error(), "does not match its key") {
		t.Errorf("a version 1 entry under another account's key: %v", err)
	}
}

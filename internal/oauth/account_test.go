package oauth

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMemberEntriesAreKeptApart: a member's login is kept beside the
// server's own, under a key of its own, and an entry filed under another
// account's key is refused rather than used.
func TestMemberEntriesAreKeptApart(t *testing.T) {
	own := &entry{Server: "gh", Issuer: "https://as", Resource: "https://r/mcp", Token: &token{Access: "daemon"}}
	ada := &entry{Server: Account("gh", "ada"), Issuer: "https://as", Resource: "https://r/mcp", Token: &token{Access: "ada"}}
	f := &file{Version: 1, Entries: map[string]*entry{entryKey(own): own, entryKey(ada): ada}}
	if entryKey(own) == entryKey(ada) {
		t.Fatal("a member's entry shares the server's key")
	}
	data, err := json.MarshalIndent(f, "", "  ") // as the store writes it
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, e := got.byServer("gh"); e == nil || e.Token.Access != "daemon" {
		t.Errorf("the server's own entry: %+v", e)
	}
	if _, e := got.byServer(Account("gh", "ada")); e == nil || e.Token.Access != "ada" {
		t.Errorf("ada's entry: %+v", e)
	}
	if _, e := got.byServer(Account("gh", "bob")); e != nil {
		t.Error("bob has ada's or the server's entry")
	}
	if s, u := SplitAccount(Account("gh", "ada")); s != "gh" || u != "ada" {
		t.Errorf("SplitAccount = %q, %q", s, u)
	}
	// ada's entry filed under the server's own key.
	forged := `{"version": 1, "entries": {"https://as https://r/mcp": {"server": "gh\u0000ada", "issuer": "https://as", "resource": "https://r/mcp", "client": {"id": "c", "kind": "dynamic"}}}}`
	if _, err := decodeFile([]byte(forged)); err == nil || !strings.Contains(err.Error(), "does not match its key") {
		t.Errorf("an entry under another account's key: %v", err)
	}
}

package config

import "testing"

func team(body string) string { return `{"team": ` + body + `}` }

func TestValidateTeam(t *testing.T) {
	const ok = `"resource": "https://plexus.example.com/mcp", "issuers": ["https://idp.example.com"]`
	tests := []struct{ in, path, msg string }{
		{team(`{}`), "team.resource", "is required"},
		{team(`{}`), "team.issuers", "is required"},
		{team(`{"resource": "http://plexus.example.com/mcp", "issuers": ["https://i"]}`), "team.resource", "must use https"},
		{team(`{"resource": "https://plexus.example.com/api", "issuers": ["https://i"]}`), "team.resource", "must end in /mcp"},
		{team(`{"resource": "https://plexus.example.com/mcp?x=1", "issuers": ["https://i"]}`), "team.resource", "no query or fragment"},
		{team(`{"resource": "https://p/mcp", "issuers": ["http://idp.example.com"]}`), "team.issuers[0]", "must use https"},
		{team(`{"resource": "https://p/mcp", "issuers": ["https://i", "https://i"]}`), "team.issuers[1]", "is listed twice"},
		{team(`{` + ok + `, "userClaim": "aud"}`), "team.userClaim", "a claim of the token itself"},
		{team(`{` + ok + `, "groupsClaim": "a b"}`), "team.groupsClaim", "is not a claim name"},
		{team(`{` + ok + `, "scopes": ["a b"]}`), "team.scopes[0]", "is not a valid OAuth scope"},
		{team(`{` + ok + `, "issuer": "https://i"}`), "team.issuer", "unknown key"},
		{`{"mcp": {"profiles": {"p": {"users": ["ada"]}}}}`, "mcp.profiles.p.users", "only team mode knows"},
		{`{"mcp": {"profiles": {"p": {"groups": [""]}}}, "team": {` + ok + `}}`, "mcp.profiles.p.groups[0]", "is empty"},
	}
	for _, tt := range tests {
		wantProblem(t, tt.in, problemsOf(t, tt.in), tt.path, tt.msg)
	}
	good := `{"mcp": {"profiles": {"eng": {"groups": ["eng"], "users": ["ada@example.com"]}}}, "team": {` + ok + `, "userClaim": "email", "scopes": ["mcp"]}}`
	f, err := Decode([]byte(good))
	if err != nil {
		t.Fatalf("Decode(%s) = %v", good, err)
	}
	if f.Team.User() != "email" || f.Team.Groups() != DefaultGroupsClaim {
		t.Errorf("claims = %q, %q", f.Team.User(), f.Team.Groups())
	}
}

func TestProfileAdmits(t *testing.T) {
	p := Profile{Users: []string{"ada"}, Groups: []string{"eng"}}
	for _, tt := range []struct {
		user   string
		groups []string
		want   bool
	}{
		{"ada", nil, true},
		{"bob", []string{"ops", "eng"}, true},
		{"bob", []string{"ops"}, false},
		{"", []string{""}, false},
		{"Ada", nil, false},
	} {
		if got := p.Admits(tt.user, tt.groups); got != tt.want {
			t.Errorf("Admits(%q, %q) = %v, want %v", tt.user, tt.groups, got, tt.want)
		}
	}
	if !(Profile{}).Admits("", nil) {
		t.Error("an ungated profile refuses")
	}
}

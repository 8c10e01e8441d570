package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Team switches on team mode's identity (R-TEAM-2): the MCP face on the
// daemon's HTTP address becomes an OAuth 2.1 protected resource that takes
// the team's identity provider's JWT access tokens instead of the loopback
// token, and profiles may be gated by user and group. Absent, the daemon is
// the one-machine daemon it always was.
type Team struct {
	// Resource is the face's canonical URL as the team's clients reach it
	// (https://plexus.example.com/mcp): the audience every token must be
	// bound to (RFC 8707), and the resource of the RFC 9728 metadata.
	Resource string `json:"resource"`
	// Issuers are the authorization servers whose tokens are taken, by
	// their issuer identifiers; each one's signing keys are read from the
	// jwks_uri of its metadata.
	Issuers []string `json:"issuers"`
	// UserClaim names the claim that identifies a user ("" is "sub"), and
	// GroupsClaim the claim that lists their groups ("" is "groups").
	UserClaim   string `json:"userClaim,omitempty"`
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// Scopes are the scopes every token must carry; a token without one is
	// refused with 403 insufficient_scope.
	Scopes []string `json:"scopes,omitempty"`
}

// The claims team mode reads by default.
const (
	DefaultUserClaim   = "sub"
	DefaultGroupsClaim = "groups"
)

// TeamCallbackPath is where a team member's browser comes back to the
// daemon from a login at an upstream server's authorization server.
const TeamCallbackPath = "/oauth/callback"

// CallbackURL is the redirect URI of team members' upstream logins: on the
// face's own origin, which their browsers reach.
func (t *Team) CallbackURL() string {
	u, err := url.Parse(t.Resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + TeamCallbackPath
}

// User is the claim that names a caller.
func (t *Team) User() string {
	if t.UserClaim == "" {
		return DefaultUserClaim
	}
	return t.UserClaim
}

// Groups is the claim that lists a caller's groups.
func (t *Team) Groups() string {
	if t.GroupsClaim == "" {
		return DefaultGroupsClaim
	}
	return t.GroupsClaim
}

// Clone returns a deep copy.
func (t *Team) Clone() *Team {
	if t == nil {
		return nil
	}
	c := *t
	c.Issuers = slices.Clone(t.Issuers)
	c.Scopes = slices.Clone(t.Scopes)
	return &c
}

func (d *decoder) team(path string, n *node) *Team {
	var t Team
	d.object(path, n, teamKeys, func(key, p string, v *node) bool {
		switch key {
		case "resource":
			t.Resource = d.str(p, v)
		case "issuers":
			t.Issuers = d.strs(p, v)
		case "userClaim":
			t.UserClaim = d.str(p, v)
		case "groupsClaim":
			t.GroupsClaim = d.str(p, v)
		case "scopes":
			t.Scopes = d.strs(p, v)
		default:
			return false
		}
		return true
	})
	return &t
}

func validateTeam(ps *problems, t *Team) {
	if t == nil {
		return
	}
	const p = "team"
	at := func(key string) string { return KeyPath(p, key) }
	switch {
	case t.Resource == "":
		ps.add(at("resource"), "is required: the URL of the face as the team's clients reach it, such as https://plexus.example.com/mcp")
	default:
		if err := CheckOAuthURL(t.Resource); err != nil {
			ps.add(at("resource"), err.Error())
		} else if u, _ := url.Parse(t.Resource); u.RawQuery != "" || u.Fragment != "" {
			ps.add(at("resource"), "must have no query or fragment (RFC 8707 §2)")
		} else if strings.TrimSuffix(u.Path, "/") != "/mcp" {
			ps.add(at("resource"), `must end in /mcp, where the face is served (profiles are under it)`)
		}
	}
	if len(t.Issuers) == 0 {
		ps.add(at("issuers"), "is required: the issuer identifiers of the team's authorization servers")
	}
	for i, iss := range t.Issuers {
		if err := CheckOAuthURL(iss); err != nil {
			ps.add(IndexPath(at("issuers"), i), err.Error())
		} else if u, _ := url.Parse(iss); u.RawQuery != "" || u.Fragment != "" {
			ps.add(IndexPath(at("issuers"), i), "must have no query or fragment (RFC 8414 §2)")
		}
		if slices.Index(t.Issuers, iss) < i {
			ps.add(IndexPath(at("issuers"), i), "is listed twice")
		}
	}
	checkClaim(ps, at("userClaim"), t.UserClaim)
	checkClaim(ps, at("groupsClaim"), t.GroupsClaim)
	for i, s := range t.Scopes {
		if !validScope(s) {
			ps.add(IndexPath(at("scopes"), i), "is not a valid OAuth scope")
		}
	}
}

// checkClaim refuses a claim name no token could carry usefully.
func checkClaim(ps *problems, p, claim string) {
	if claim == "" {
		return
	}
	switch claim {
	case "iss", "aud", "exp", "nbf", "iat", "jti", "scope", "scp":
		ps.add(p, fmt.Sprintf("%q is a claim of the token itself, not of its user", claim))
		return
	}
	if len(claim) > 128 || strings.ContainsFunc(claim, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		ps.add(p, "is not a claim name")
	}
}

// validateGates checks a profile's users and groups.
func validateGates(ps *problems, p string, pr Profile, team *Team) {
	if (len(pr.Users) > 0 || len(pr.Groups) > 0) && team == nil {
		ps.add(KeyPath(p, "users"), `gates a profile by user or group, which only team mode knows: set "team" too, or remove "users" and "groups"`)
	}
	for _, g := range []struct {
		key  string
		list []string
	}{{"users", pr.Users}, {"groups", pr.Groups}} {
		for i, v := range g.list {
			if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				ps.add(IndexPath(KeyPath(p, g.key), i), "is empty or holds a control character")
			}
		}
	}
}

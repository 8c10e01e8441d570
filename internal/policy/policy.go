// Package policy decides, before a tool call is forwarded, whether it may
// go: the rules of mcp.policy (allow, deny, or ask the user first) matched
// by tool, client and profile, and the rate limits per client. It is pure
// decision and counting: the host's call pipeline asks it, and asks the
// user, and refuses.
package policy

import (
	"encoding/json"
	"path"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/config"
)

// Call is what a decision looks at: who calls, and what.
type Call struct {
	Tool    string // the Plexus name
	Client  string // the client's name, "" when unknown
	Profile string // the face profile, "" for none (the settings API)
	// Annotations are the tool's as its server wrote them (nil for none);
	// read only when a rule asks about destructiveness.
	Annotations json.RawMessage
	// NotATool is a catalog entry that reads a resource or gets a prompt:
	// never destructive.
	NotATool bool
}

// Decision is what the rules say of a call.
type Decision struct {
	// Action is a config.Policy* action; config.PolicyAllow when no rule
	// matched.
	Action string
	// Rule names the rule that decided, as its key path in the settings
	// ("mcp.policy.rules[2]"); "" when none matched.
	Rule string
}

// Policy is mcp.policy, ready to match.
type Policy struct {
	rules  []config.PolicyRule
	names  []string // each rule's key path, for its decisions
	limits []config.RateLimit
	keys   []string // each limit's identity, for its counters (limit.go)
	paths  []string // each limit's key path, for its refusals
}

// Compile readies p; nil when it has no rule and no limit, so that a
// caller's nil check is the whole cost of an empty policy.
func Compile(p *config.Policy) *Policy {
	if p == nil || len(p.Rules) == 0 && len(p.Limits) == 0 {
		return nil
	}
	c := &Policy{rules: p.Clone().Rules, limits: p.Clone().Limits}
	for i := range c.rules {
		c.names = append(c.names, "mcp.policy.rules["+strconv.Itoa(i)+"]")
	}
	for i, l := range c.limits {
		c.keys = append(c.keys, limitKey(l))
		c.paths = append(c.paths, "mcp.policy.limits["+strconv.Itoa(i)+"]")
	}
	return c
}

// Decide is the action of the first rule that matches c.
func (p *Policy) Decide(c Call) Decision {
	if p == nil {
		return Decision{Action: config.PolicyAllow}
	}
	for i, r := range p.rules {
		if matches(r.Tool, c.Tool) && matches(r.Client, c.Client) && matches(r.Profile, c.Profile) &&
			(r.Destructive == nil || *r.Destructive == c.destructive()) {
			return Decision{Action: r.Action, Rule: p.names[i]}
		}
	}
	return Decision{Action: config.PolicyAllow}
}

// HasLimits reports whether any rate limit is configured.
func (p *Policy) HasLimits() bool { return p != nil && len(p.limits) > 0 }

// matches reports whether glob ("" for any) matches s. Globs were checked
// when the settings were validated.
func matches(glob, s string) bool {
	if glob == "" || glob == "*" {
		return true
	}
	ok, _ := path.Match(glob, s)
	return ok
}

// destructive reads the tool's annotations as MCP defines them: a tool
// may act destructively unless it says it only reads (readOnlyHint) or
// that its updates are not destructive (destructiveHint false).
func (c Call) destructive() bool {
	if c.NotATool {
		return false
	}
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	if len(c.Annotations) > 0 {
		_ = json.Unmarshal(c.Annotations, &a) // unreadable annotations say nothing: the default holds
	}
	if a.ReadOnly != nil && *a.ReadOnly {
		return false
	}
	return a.Destructive == nil || *a.Destructive
}

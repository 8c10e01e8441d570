package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Policy is the "mcp.policy" section: which tool calls are allowed,
// refused, or wait for the user's approval, and how often a client may
// call. Nil (or empty) allows every call, as before it existed.
type Policy struct {
	// Rules are tried in order; the first that matches a call decides it.
	// A call no rule matches is allowed.
	Rules []PolicyRule `json:"rules,omitempty"`
	// Limits are all applied: a call over any limit that matches it is
	// refused with the time to try again.
	Limits []RateLimit `json:"limits,omitempty"`
}

// PolicyRule matches calls by globs (path.Match syntax: *, ?, [a-z]);
// an empty glob matches everything.
type PolicyRule struct {
	// Tool is a glob over the tool's Plexus name (server_tool).
	Tool string `json:"tool,omitempty"`
	// Client is a glob over the calling client's name (its clientInfo).
	Client string `json:"client,omitempty"`
	// Profile is a glob over the profile the client connected to
	// ("default" for the face's root).
	Profile string `json:"profile,omitempty"`
	// Destructive, if set, matches only tools that are (true) or are not
	// (false) destructive by their annotations, read as MCP reads them: a
	// tool is destructive unless it says readOnlyHint true or
	// destructiveHint false.
	Destructive *bool `json:"destructive,omitempty"`
	// Action is what a matching call gets: PolicyAllow, PolicyDeny,
	// PolicyAskOnce or PolicyAskEvery.
	Action string `json:"action"`
}

// Actions of a policy rule.
const (
	// PolicyAllow forwards the call without asking.
	PolicyAllow = "allow"
	// PolicyDeny refuses the call; it is never sent.
	PolicyDeny = "deny"
	// PolicyAskOnce asks the user before the first call of the tool in a
	// session; an approval holds for the rest of the session.
	PolicyAskOnce = "askOncePerSession"
	// PolicyAskEvery asks the user before every call.
	PolicyAskEvery = "askEveryCall"
)

// RateLimit bounds the calls of each client to the tools it matches: at
// most Calls in any WindowMs, counted per client name across every tool
// the limit matches.
type RateLimit struct {
	Tool     string `json:"tool,omitempty"`
	Client   string `json:"client,omitempty"`
	Calls    int    `json:"calls"`
	WindowMs int    `json:"windowMs"`
}

var (
	policyKeys    = jsonKeys[Policy]()
	policyRuleKey = jsonKeys[PolicyRule]()
	rateLimitKeys = jsonKeys[RateLimit]()
)

func (d *decoder) policy(path string, n *node) *Policy {
	var pol Policy
	d.object(path, n, policyKeys, func(key, p string, v *node) bool {
		switch key {
		case "rules":
			pol.Rules = decodeList(d, p, v, d.policyRule)
		case "limits":
			pol.Limits = decodeList(d, p, v, d.rateLimit)
		default:
			return false
		}
		return true
	})
	return &pol
}

// decodeList decodes an array whose elements elem decodes.
func decodeList[T any](d *decoder, path string, n *node, elem func(string, *node) T) []T {
	if n.kind != arrayKind {
		d.wrongType(path, "an array", n)
		return nil
	}
	out := make([]T, 0, len(n.elems))
	for i, e := range n.elems {
		out = append(out, elem(IndexPath(path, i), e))
	}
	return out
}

func (d *decoder) policyRule(path string, n *node) PolicyRule {
	var r PolicyRule
	d.object(path, n, policyRuleKey, func(key, p string, v *node) bool {
		switch key {
		case "tool":
			r.Tool = d.str(p, v)
		case "client":
			r.Client = d.str(p, v)
		case "profile":
			r.Profile = d.str(p, v)
		case "destructive":
			r.Destructive = d.boolPtr(p, v)
		case "action":
			r.Action = d.str(p, v)
		default:
			return false
		}
		return true
	})
	return r
}

func (d *decoder) rateLimit(path string, n *node) RateLimit {
	var l RateLimit
	d.object(path, n, rateLimitKeys, func(key, p string, v *node) bool {
		switch key {
		case "tool":
			l.Tool = d.str(p, v)
		case "client":
			l.Client = d.str(p, v)
		case "calls":
			l.Calls = d.int(p, v)
		case "windowMs":
			l.WindowMs = d.int(p, v)
		default:
			return false
		}
		return true
	})
	return l
}

// maxPolicyEntries bounds the rules and the limits: each call is matched
// against them in turn.
const maxPolicyEntries = 1000

var policyActions = []string{PolicyAllow, PolicyDeny, PolicyAskOnce, PolicyAskEvery}

func validatePolicy(ps *problems, p *Policy) {
	if p == nil {
		return
	}
	if len(p.Rules) > maxPolicyEntries {
		ps.add("mcp.policy.rules", fmt.Sprintf("at most %d rules", maxPolicyEntries))
	}
	if len(p.Limits) > maxPolicyEntries {
		ps.add("mcp.policy.limits", fmt.Sprintf("at most %d limits", maxPolicyEntries))
	}
	for i, r := range p.Rules {
		at := IndexPath("mcp.policy.rules", i)
		checkGlob(ps, KeyPath(at, "tool"), r.Tool)
		checkGlob(ps, KeyPath(at, "client"), r.Client)
		checkGlob(ps, KeyPath(at, "profile"), r.Profile)
		if !slices.Contains(policyActions, r.Action) {
			ps.add(KeyPath(at, "action"), "must be one of "+quoteAll(policyActions))
		}
	}
	for i, l := range p.Limits {
		at := IndexPath("mcp.policy.limits", i)
		checkGlob(ps, KeyPath(at, "tool"), l.Tool)
		checkGlob(ps, KeyPath(at, "client"), l.Client)
		if l.Calls < 1 {
			ps.add(KeyPath(at, "calls"), "must be at least 1")
		}
		if l.WindowMs < 1 {
			ps.add(KeyPath(at, "windowMs"), "must be at least 1 (milliseconds)")
		} else {
			checkMs(ps, KeyPath(at, "windowMs"), int64(l.WindowMs))
		}
	}
}

// checkGlob reports a glob path.Match cannot use.
func checkGlob(ps *problems, at, glob string) {
	if _, err := path.Match(glob, ""); err != nil {
		ps.add(at, fmt.Sprintf("not a valid pattern (%v): use *, ? and [a-z]", err))
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Clone returns a deep copy of p.
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	c := &Policy{Rules: slices.Clone(p.Rules), Limits: slices.Clone(p.Limits)}
	for i := range c.Rules {
		c.Rules[i].Destructive = clonePtr(c.Rules[i].Destructive)
	}
	return c
}

package catalog

import (
	"encoding/base32"
	"strings"
)

// The hashed scheme below (mcp.names = "hashed"; the readable scheme, the
// default, is in readable.go) is a compatibility promise: tools pinned
// before the readable scheme keep these names under it too. Agents, saved
// conversations, allow-lists in other tools and users' muscle memory all refer
// to advertised names, so ToolName and OpName must return the same string for
// the same inputs forever. Changing anything here — the prefix, the
// sanitising, the hash input, its encoding or length, the truncation — renames
// every tool for every user. The golden values in name_test.go exist to make
// such a change impossible to do by accident.

const (
	// maxNameLen is the tool-name rule of the model APIs (OpenAI, Anthropic):
	// ^[a-zA-Z0-9_-]{1,64}$.
	maxNameLen = 64
	namePrefix = "mcp_"
	// hashLen base32 characters carry 40 bits. The hash only has to tell apart
	// names whose visible parts coincide after sanitising and truncation,
	// which are few per server, so 40 bits leave collisions negligible.
	hashLen = 8
	// minToolPart is how much of the tool name survives before the server
	// part is shortened instead. Only reachable with server names longer
	// than the 32 characters the config allows.
	minToolPart = 16
)

// Hash domains keep tool names and operation names apart: a server's own tool
// called "read_resource" hashes "tool\x00srv\x00read_resource", while the
// operation hashes "op\x00srv\x00read_resource". The inputs differ in their
// first byte, so no tool name, however chosen, hashes like an operation.
const (
	domainTool = "tool"
	domainOp   = "op"
)

var nameHashEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// ToolName returns the name under which Plexus advertises the upstream tool
// `tool` of server `server`: mcp_<server>_<tool>_<hash>, always matching
// ^[a-zA-Z0-9_-]{1,64}$.
//
// Characters outside [a-zA-Z0-9_-] are replaced by '_', and a long tool part
// (then, if need be, server part) is shortened; the hash is taken over the
// original, unsanitised names, so "a.b" and "a_b", or two long names sharing
// a prefix, still get different names. The result depends only on the two
// arguments: the same tool keeps its name across restarts and machines.
func ToolName(server, tool string) string {
	return buildName(domainTool, server, tool)
}

// OpName returns the name of a per-server operation such as KindReadResource
// or KindGetPrompt, in the same scheme as ToolName. It never equals the
// ToolName of any tool of the same server, including one whose upstream name
// is the operation's name.
func OpName(server, op string) string {
	return buildName(domainOp, server, op)
}

func buildName(domain, server, item string) string {
	hash := nameHash(domain, server, item)[:hashLen]

	s, t := sanitize(server), sanitize(item)
	// Room for the server and tool parts once the fixed parts are placed:
	// "mcp_" + s + "_" + t + "_" + hash.
	room := maxNameLen - len(namePrefix) - 2 - hashLen
	if len(s)+len(t) > room {
		keepT := max(room-len(s), min(len(t), minToolPart))
		t = t[:keepT]
		s = s[:min(len(s), room-keepT)]
	}
	return namePrefix + s + "_" + t + "_" + hash
}

// sanitize maps every rune outside [a-zA-Z0-9_-] to a single '_'. The result
// is ASCII, so byte slicing in buildName cannot split a character.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if isNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func isNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

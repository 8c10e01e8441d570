package catalog

import (
	"crypto/sha256"
	"strconv"
	"strings"
)

// The readable scheme (the default since the seeds' hashed names, which
// stay available as mcp.names = "hashed"): a tool is offered as
// server_tool wherever that is free and fits the model APIs' rule, with a
// short suffix only on a collision or past the length limit. Which of two
// colliding tools keeps the plain name depends on which came first, so the
// name a tool gets is not a function of its server and tool names alone:
// the pins record it at first sight (pins.Tool.Name), and it is read back
// from there ever after — across restarts, whatever order the servers come
// up in. This file only proposes names; the pins decide.

// Operation suffixes of the readable scheme: server__read_resource,
// server__get_prompt. A tool's name never ends in one of them
// (plainName), so no tool takes an operation's name.
const opSeparator = "__"

// reservedNames are Plexus's own tools on the face (internal/face: the
// meta-tools of a profile with metaTools, the control tools): a server
// "search" with a tool "tools" must not shadow search_tools.
var reservedNames = map[string]bool{"search_tools": true, "describe_tool": true, "call_tool": true}

// reservedPrefix is the face's own namespace (plexus_status,
// plexus_restart...): a server called "plexus" gets suffixed names rather
// than one of these.
const reservedPrefix = "plexus_"

// suffixLens are the lengths of the short suffix tried in turn: 4 base32
// characters (20 bits) tell apart the few names that collide, and a longer
// one is taken only when the shorter is taken too.
var suffixLens = [...]int{4, 6, 8}

// ReadableName is the name the readable scheme gives tool of server when
// nothing else has its plain name: server_tool, every character outside
// [a-zA-Z0-9_-] replaced by '_', suffixed only when that does not fit 64
// characters or is reserved (an operation's form, Plexus's own tools).
func ReadableName(server, tool string) string {
	return AssignToolName(server, tool, func(string) bool { return false })
}

// plainName is server_tool, and whether it may be given out as it is.
func plainName(server, tool string) (name string, ok bool) {
	name = sanitize(server) + "_" + sanitize(tool)
	return name, len(name) <= maxNameLen && !reserved(name)
}

func reserved(name string) bool {
	return reservedNames[name] || strings.HasPrefix(name, reservedPrefix) ||
		strings.HasSuffix(name, opSeparator+KindReadResource) || strings.HasSuffix(name, opSeparator+KindGetPrompt)
}

// AssignToolName returns the readable name for tool of server among names
// already given out (taken): server_tool if it is free and fits, else the
// shortest suffixed form that is free. The suffix is a hash of the server
// and tool names, so the same newcomer gets the same name whoever holds the
// plain one; the result always matches ^[a-zA-Z0-9_-]{1,64}$.
func AssignToolName(server, tool string, taken func(string) bool) string {
	if name, ok := plainName(server, tool); ok && !taken(name) {
		return name
	}
	hash := nameHash(domainTool, server, tool)
	for _, n := range suffixLens {
		if name := suffixed(server, tool, hash[:n]); !taken(name) {
			return name
		}
	}
	// Three hashes of one tool taken by others: only a file edited by hand
	// gets here. Count on until a name is free.
	for i := 2; ; i++ {
		if name := suffixed(server, tool, hash[:hashLen]+strconv.Itoa(i)); !taken(name) {
			return name
		}
	}
}

// suffixed is server_tool_suffix, the server and tool parts shortened as
// ToolName shortens them when the whole would pass 64 characters.
func suffixed(server, tool, suffix string) string {
	s, t := sanitize(server), sanitize(tool)
	room := maxNameLen - 2 - len(suffix)
	if len(s)+len(t) > room {
		keepT := max(room-len(s), min(len(t), minToolPart))
		t = t[:keepT]
		s = s[:min(len(s), room-keepT)]
	}
	return s + "_" + t + "_" + suffix
}

// ReadableOpName is the readable scheme's name of a per-server operation
// (KindReadResource, KindGetPrompt): server__read_resource. Server names
// are unique and at most 32 characters of [a-zA-Z0-9_-] (config), so these
// names are unique, fit, and — since no tool's name ends like one — never
// a tool's.
func ReadableOpName(server, op string) string {
	return sanitize(server) + opSeparator + op
}

// nameHash is the lower-case base32 SHA-256 of domain, server and item,
// as ToolName's hash.
func nameHash(domain, server, item string) string {
	h := sha256.Sum256([]byte(domain + "\x00" + server + "\x00" + item))
	return strings.ToLower(nameHashEncoding.EncodeToString(h[:]))
}

// ValidName reports whether name is one clients accept as a tool's name:
// ^[a-zA-Z0-9_-]{1,64}$.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > maxNameLen {
		return false
	}
	for _, r := range name {
		if !isNameRune(r) {
			return false
		}
	}
	return true
}

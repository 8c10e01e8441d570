package registry

import (
	"regexp"
	"strings"

	"github.com/plexus-mcp/plexus/internal/serverconf"
)

var (
	// npmNameRe is npm's rule for a package name (lowercase, or the
	// uppercase of old packages), never starting with a dash or a dot:
	// npx must read it as a package, not an option.
	npmNameRe = regexp.MustCompile(`^(@[A-Za-z0-9_~-][A-Za-z0-9._~-]*/)?[A-Za-z0-9_~-][A-Za-z0-9._~-]*$`)
	// pypiNameRe is PEP 508's rule for a project name.
	pypiNameRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	// nugetNameRe is NuGet's rule for a package id.
	nugetNameRe  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
	headerNameRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

func validIdentifier(kind, id string) bool {
	if len(id) > 214 {
		return false
	}
	switch kind {
	case kindNPM:
		return npmNameRe.MatchString(id)
	case kindPyPI:
		return pypiNameRe.MatchString(id)
	case kindNuGet:
		return nugetNameRe.MatchString(id)
	}
	return false
}

// SuggestName is the Plexus name a registry server is added under unless
// the person gives one: its own name's last part, without the words "mcp"
// and "server" (io.github.github/github-mcp-server → github).
func SuggestName(registryName string) string {
	_, last, _ := strings.Cut(registryName, "/")
	if n := serverconf.NameFromArgv([]string{last}); n != "" {
		return n
	}
	return "server"
}

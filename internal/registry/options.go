package registry

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// Option is one way to run a registry server, as Plexus sees it.
type Option struct {
	// Index counts from 1: the packages in the document's order, then the
	// remotes.
	Index int
	// Kind is the package's registry type (npm, pypi, nuget, oci, mcpb, …)
	// or "remote".
	Kind string
	// Label is the package and its version, or the remote's URL template.
	Label string
	// Transport is stdio, streamable-http or sse.
	Transport string
	// Runnable says whether Plexus can run it; Reason why not.
	Runnable bool
	Reason   string
}

// Options lists the ways s can be run, in the order Index counts them.
func Options(s Server) []Option {
	var out []Option
	for i, p := range s.Packages {
		o := Option{Index: i + 1, Kind: clean(strings.ToLower(p.RegistryType), 20), Label: clean(p.Identifier, 200),
			Transport: transportOf(p.Transport.Type)}
		if p.Version != "" {
			o.Label += packageVersionSep(o.Kind) + clean(p.Version, 60)
		}
		o.Reason = packageRefusal(p)
		o.Runnable = o.Reason == ""
		out = append(out, o)
	}
	for i, r := range s.Remotes {
		o := Option{Index: len(s.Packages) + i + 1, Kind: KindRemote, Label: clean(r.URL, 300), Transport: transportOf(r.Type)}
		o.Reason = remoteRefusal(r)
		o.Runnable = o.Reason == ""
		out = append(out, o)
	}
	return out
}

// KindRemote is the kind of an option that is a remote server.
const KindRemote = "remote"

// Package registry types Plexus knows.
const (
	kindNPM   = "npm"
	kindPyPI  = "pypi"
	kindNuGet = "nuget"
	kindOCI   = "oci"
	kindMCPB  = "mcpb"
)

func transportOf(t string) string {
	if t == "" {
		return "stdio"
	}
	return clean(t, 30)
}

func packageVersionSep(kind string) string {
	if kind == kindPyPI {
		return "=="
	}
	if kind == kindOCI {
		return ":"
	}
	return "@"
}

// Default package indexes: a package from another one names its index on
// the command line (npm), or is refused (PyPI and NuGet, whose index URLs
// Plexus cannot derive from a registry's base URL).
var defaultIndexes = map[string][]string{
	kindNPM:   {"https://registry.npmjs.org", "https://registry.npmjs.com"},
	kindPyPI:  {"https://pypi.org", "https://pypi.python.org"},
	kindNuGet: {"https://api.nuget.org", "https://api.nuget.org/v3/index.json"},
}

func defaultIndex(kind, base string) bool {
	if base == "" {
		return true
	}
	for _, d := range defaultIndexes[kind] {
		if strings.EqualFold(strings.TrimRight(base, "/"), d) {
			return true
		}
	}
	return false
}

// packageRefusal says why Plexus cannot run p, or "".
func packageRefusal(p Package) string {
	kind := strings.ToLower(p.RegistryType)
	switch kind {
	case kindOCI:
		return "Plexus runs no containers: this is a container image for Docker or Podman (" + clean(p.Identifier, 120) + ")"
	case kindMCPB:
		return "this is an MCP bundle (.mcpb), an archive to download, check and unpack; Plexus runs servers from npm, PyPI and NuGet packages and remote URLs, not bundles"
	case kindNPM, kindPyPI, kindNuGet:
	default:
		return fmt.Sprintf("Plexus does not know how to run a %q package (it runs npm, PyPI and NuGet packages)", clean(p.RegistryType, 30))
	}
	if t := p.Transport.Type; t != "" && t != "stdio" {
		return "this package serves MCP over HTTP on a port of its own (" + clean(t, 30) + "); Plexus runs a package over stdio"
	}
	if !validIdentifier(kind, p.Identifier) {
		return fmt.Sprintf("its package name %q is not a valid %s package name", clean(p.Identifier, 80), kind)
	}
	if p.Version != "" && !ValidVersion(p.Version) {
		return fmt.Sprintf("its package version %q is not a plain version", clean(p.Version, 40))
	}
	if !defaultIndex(kind, p.RegistryBaseURL) {
		if kind != kindNPM {
			return "its package is on another " + kind + " index (" + clean(p.RegistryBaseURL, 120) + "), which Plexus cannot point uvx or dnx at; add it by hand"
		}
		if !httpsURL(p.RegistryBaseURL) {
			return "its npm registry " + clean(p.RegistryBaseURL, 120) + " is not an https URL"
		}
	}
	for _, kv := range p.EnvironmentVariables {
		if !serverconf.IsVarName(kv.Name) {
			return fmt.Sprintf("it declares the environment variable %q, which is not a valid name", clean(kv.Name, 60))
		}
	}
	return ""
}

// remoteRefusal says why Plexus cannot connect to r, or "".
func remoteRefusal(r Transport) string {
	switch r.Type {
	case "streamable-http", "sse":
	default:
		return fmt.Sprintf("Plexus does not know the remote transport %q (it speaks streamable-http and sse)", clean(r.Type, 30))
	}
	if l := strings.ToLower(r.URL); !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://") {
		return "its URL is not an http(s) URL"
	}
	for _, h := range r.Headers {
		if !headerNameRe.MatchString(h.Name) {
			return fmt.Sprintf("it declares the header %q, which is not a valid header name", clean(h.Name, 60))
		}
	}
	return ""
}

func httpsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil && u.RawQuery == "" && u.Fragment == ""
}

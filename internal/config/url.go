package config

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
)

// CheckURL reports whether raw is an acceptable server URL (R-CFG-4):
// http or https, with a host, without userinfo or a fragment. raw must have
// its placeholders expanded already; the daemon checks again after expanding,
// because a variable's value could bring in what the template did not have.
//
// Messages describe the offending part and never quote it: query values and
// userinfo are where secrets end up. They are written to follow the field's
// name ("url: a host is required").
func CheckURL(raw string) error {
	if raw == "" {
		return errors.New("is empty")
	}
	for _, c := range []byte(raw) {
		if c <= ' ' || c == 0x7f {
			return errors.New("contains a space or control character")
		}
	}
	if strings.Contains(raw, "#") {
		return errors.New("a fragment (#...) is not allowed")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, so its text is not passed on.
		return errors.New("is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("must start with https:// or http://")
	}
	if u.User != nil {
		return errors.New("userinfo is not allowed: a URL must not carry a user name or password; " +
			`send credentials in a header with {"env": "VAR"} or through bearerTokenEnvVar`)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return errors.New("a host is required (https://HOST/...)")
	}
	return nil
}

// checkURLTemplate checks a URL that may hold $VAR placeholders: each one is
// replaced by a harmless token and the result must pass CheckURL. The scheme
// must be written out, so that what a URL may reach is decided by the file.
func checkURLTemplate(raw string) error {
	if err := checkPlaceholders(raw); err != nil {
		return err
	}
	if scheme, _, ok := strings.Cut(raw, ":"); ok && strings.Contains(scheme, "$") {
		return errors.New("the scheme must be written out (https:// or http://), not a placeholder")
	}
	probe, err := Expand(raw, func(string) (string, bool) { return "1", true })
	if err != nil {
		return err
	}
	return CheckURL(probe)
}

// CheckOAuthURL adds OAuth 2.1's rule to CheckURL: endpoints use https,
// except on the loopback interface where the traffic never leaves the host.
func CheckOAuthURL(raw string) error {
	if err := CheckURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.Scheme == "https" || isLoopback(u.Hostname()) {
		return nil
	}
	return errors.New("must use https (http is allowed only for localhost)")
}

// CheckClientMetadataURL reports whether raw may be Plexus's OAuth client
// ID metadata document URL, its client_id at authorization servers that
// fetch it (MCP 2025-11-25, "Client ID Metadata Documents": an https URL
// with a path; http only on localhost, for tests), without a query.
func CheckClientMetadataURL(raw string) error {
	if err := CheckOAuthURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.Path == "" || u.Path == "/" {
		return errors.New("must have a path (https://HOST/PATH/client.json): it names the document")
	}
	if u.RawQuery != "" {
		return errors.New("must not have a query")
	}
	return nil
}

// CheckRegistryURL checks an MCP registry's base URL: https (http only on
// the loopback interface, as for OAuth: the answers say what commands run),
// without a query, as the API's paths are added to it.
func CheckRegistryURL(raw string) error {
	if err := CheckOAuthURL(raw); err != nil {
		return err
	}
	if strings.ContainsAny(raw, "?$") {
		return errors.New("must be the registry's base URL, without a query or a placeholder (such as https://registry.modelcontextprotocol.io)")
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

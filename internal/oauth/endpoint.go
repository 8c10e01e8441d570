package oauth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
)

// CheckEndpoint reports whether raw may be used as an OAuth endpoint found by
// discovery (R-AUTH-4): an absolute https URL, or http on a loopback host,
// without userinfo or a fragment: the rule of configured endpoints
// (config.CheckOAuthURL). The message names the problem, never the URL's
// query (where secrets would be).
func CheckEndpoint(raw string) error { return config.CheckOAuthURL(raw) }

// shellMeta are the characters a shell would act on. A URL that reaches a
// browser is never given to a shell, but an authorization endpoint that holds
// them is refused anyway: no honest server needs them, and a platform opener
// that misbehaves (CVE-2025-6514) must not be handed them.
const shellMeta = "`$;|&<>(){}\\\"'!"

// CheckAuthorizationEndpoint is CheckEndpoint plus the rules for the one URL
// that is opened in a browser: it must not start with '-' (an opener would
// read it as an option) and must not hold shell metacharacters.
func CheckAuthorizationEndpoint(raw string) error {
	if strings.HasPrefix(raw, "-") {
		return errors.New("starts with '-' (it would be read as a command-line option)")
	}
	if err := CheckEndpoint(raw); err != nil {
		return err
	}
	if i := strings.IndexAny(raw, shellMeta); i >= 0 {
		return fmt.Errorf("holds the shell metacharacter %q", raw[i])
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

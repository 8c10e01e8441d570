package oauth

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// probeTimeout bounds the discovery a 401 without a token triggers.
const probeTimeout = 5 * time.Second

// offersLogin reports whether the server at serverURL answers a 401 as an
// OAuth-protected resource: its protected-resource metadata (named by the
// challenge, at the endpoint's path, or at the root) or its origin's
// authorization-server metadata can be found. A plain `Bearer realm=…`
// from a server with neither is a refused credential (a wrong API key),
// not a login to run.
func offersLogin(ctx context.Context, base http.RoundTripper, serverURL string, ch challenge) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	hc := &http.Client{Transport: base}
	for _, c := range prmCandidates(ch.resourceMetadata, serverURL) {
		if p, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, hc); err == nil && p != nil {
			return true
		}
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "", "", "", ""
	asm, err := auth.GetAuthServerMetadata(ctx, u.String(), hc)
	return err == nil && asm != nil
}

package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/oauth"
)

// A team member's call to a server that logs in with OAuth carries the
// member's own login (oauth.Account), never the daemon's nor another
// member's (R-TEAM-2). A member without one gets, instead of the call, a
// login started for them: the authorization URL to open, whose redirect
// comes back to the daemon's own page on the face's origin (a member's
// browser is not on the daemon's machine), after which the tokens are kept
// under their name and their next call carries them. No
// server restarts: the server's own connection keeps the daemon's login.

// ServeMemberRedirect serves a team member's browser coming back from a
// login at an upstream's authorization server (config.TeamCallbackPath).
func (h *Host) ServeMemberRedirect(w http.ResponseWriter, r *http.Request) {
	if h.oauth == nil {
		http.NotFound(w, r)
		return
	}
	h.oauth.CompleteRedirect(w, r)
}

// userLoginResult answers a call refused for want of the member's login.
func (h *Host) userLoginResult(ctx context.Context, ule *oauth.UserLoginError) *mcp.CallToolResult {
	p, err := h.loginParams(ule.Server)
	if err == nil && p.Grant != nil {
		err = errors.New("it logs in with a grant, not a person's login")
	}
	if err != nil {
		return errorResult(fmt.Sprintf("%v; and the login for you could not start: %v", ule, err), "needs_login", "")
	}
	team := h.snap.Load().cfg.Team
	if team == nil {
		return errorResult(ule.Error(), "needs_login", "")
	}
	p.Server = oauth.Account(ule.Server, ule.User)
	pd, err := h.oauth.StartLoginAt(context.WithoutCancel(ctx), p, team.CallbackURL(), func() error {
		// The member's next call reaches the server with the new token.
		h.log.Info("a team member logged in to a server", "server", ule.Server, "user", ule.User)
		return nil
	})
	if err != nil {
		return errorResult(fmt.Sprintf("%v; and the login for you could not start: %v", ule, err), "needs_login", "")
	}
	return errorResult(fmt.Sprintf("%v. To log in, open %s (valid until %s), then call again.",
		ule, pd.AuthURL, pd.Expires.UTC().Format(time.RFC3339)), "needs_login", "")
}

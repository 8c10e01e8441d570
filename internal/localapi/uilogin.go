package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Trusted returns the route table without the peer check, for in-process
// callers that authenticated the request themselves (the web page's guard,
// which demands its session cookie). The UI-login route is not part of it:
// a one-time login link is handed out over the unix socket only.
func (a *Handler) Trusted() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == uiLoginPath {
			writeError(w, http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound,
				Message: "no such API route: " + r.Method + " " + r.URL.Path})
			return
		}
		a.mux.ServeHTTP(w, r)
	})
}

const uiLoginPath = apitype.APIVersion + "/ui/login"

// uiLogin answers POST /v1/ui/login with a one-time link to the web page,
// minted by the hook the daemon set (UILogin); without one the daemon
// serves no page.
func (a *Handler) uiLogin(w http.ResponseWriter, r *http.Request) {
	if a.UILogin == nil {
		writeError(w, http.StatusServiceUnavailable, apitype.ErrorBody{Code: apitype.CodeUnavailable,
			Message: "the daemon serves no web page: it listens on no loopback address",
			Hint:    "restart the daemon without --listen off"})
		return
	}
	link, err := a.UILogin()
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, link)
}

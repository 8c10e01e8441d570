package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// login starts an OAuth login (R-API-1): the answer holds the URL a person
// opens; progress shows in the server's status and events.
func (a *Handler) login(w http.ResponseWriter, r *http.Request) {
	var req apitype.LoginRequest
	if r.ContentLength != 0 && !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	start, err := a.host.Login(r.Context(), r.PathValue("name"))
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, start)
}

// completeLogin takes the redirected URL a person pasted.
func (a *Handler) completeLogin(w http.ResponseWriter, r *http.Request) {
	var req apitype.LoginCompleteRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	name := r.PathValue("name")
	if err := a.host.CompleteLogin(r.Context(), name, req.RedirectURL); err != nil {
		a.renderError(w, r, err)
		return
	}
	rev, _ := a.host.Servers()
	a.writeResult(w, name, rev, http.StatusOK)
}

// logout forgets the server's tokens and registration.
func (a *Handler) logout(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := a.host.Logout(r.Context(), name); err != nil {
		a.renderError(w, r, err)
		return
	}
	rev, _ := a.host.Servers()
	a.writeResult(w, name, rev, http.StatusOK)
}

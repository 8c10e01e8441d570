package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// accept re-pins held tools of a server: a person's decision (R-CAT-6).
func (a *Handler) accept(w http.ResponseWriter, r *http.Request) {
	var req apitype.AcceptRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	if req.All == (len(req.Tools) > 0) {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: `name the tools to accept ("tools") or accept every held tool ("all": true), not both`})
		return
	}
	name := r.PathValue("name")
	accepted, err := a.host.Accept(name, req.Tools, req.All, req.Hashes)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	res := apitype.AcceptResult{Accepted: accepted}
	if res.Accepted == nil {
		res.Accepted = []string{}
	}
	if sc, err := a.host.Server(name); err == nil {
		res.Server = &sc.Status
	}
	writeJSON(w, http.StatusOK, res)
}

// approve trusts a server's current definition and starts it: a person's
// decision (R-CAT-6).
func (a *Handler) approve(w http.ResponseWriter, r *http.Request) {
	var req apitype.ApproveRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	name := r.PathValue("name")
	if err := a.host.Approve(r.Context(), name, req.Key); err != nil {
		a.renderError(w, r, err)
		return
	}
	rev, _ := a.host.Servers()
	a.writeResult(w, name, rev, http.StatusOK)
}

package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// callApprovals lists the tool calls waiting for the user's approval.
func (a *Handler) callApprovals(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.host.Approvals())
}

// decideCall approves or refuses a waiting call: a person's decision.
func (a *Handler) decideCall(w http.ResponseWriter, r *http.Request) {
	var req apitype.DecideCallRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	if err := a.host.DecideCall(r.PathValue("id"), req.Approve); err != nil {
		a.renderError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

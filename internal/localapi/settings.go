package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
)

func (a *Handler) getSettings(w http.ResponseWriter, r *http.Request) {
	s := a.host.Settings()
	setRevision(w, s.Revision)
	writeJSON(w, http.StatusOK, apitype.Settings{Revision: s.Revision, CallTimeoutMs: s.CallTimeoutMs, RetryMs: s.RetryMs})
}

func (a *Handler) putSettings(w http.ResponseWriter, r *http.Request) {
	based, err := ifMatch(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	var req apitype.Settings
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	rev, err := a.host.SetSettings(host.Settings{CallTimeoutMs: req.CallTimeoutMs, RetryMs: req.RetryMs}, based)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	s := a.host.Settings()
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, apitype.Settings{Revision: rev, CallTimeoutMs: s.CallTimeoutMs, RetryMs: s.RetryMs})
}

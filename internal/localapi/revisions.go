package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// listRevisions answers GET /v1/revisions: the kept versions of
// extensions.json, newest first.
func (a *Handler) listRevisions(w http.ResponseWriter, r *http.Request) {
	revs, err := a.host.Revisions()
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	out := apitype.Revisions{Revisions: []apitype.Revision{}}
	for _, rv := range revs {
		out.Revisions = append(out.Revisions, apitype.Revision{Name: rv.Name, Saved: rv.Saved, Size: rv.Size})
	}
	writeJSON(w, http.StatusOK, out)
}

// restoreRevision answers POST /v1/revisions/{name}/restore: the version
// goes back into extensions.json and is applied.
func (a *Handler) restoreRevision(w http.ResponseWriter, r *http.Request) {
	rev, err := a.host.RestoreRevision(r.Context(), r.PathValue("name"))
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, apitype.WriteResult{Revision: rev})
}

// discardEdits answers POST /v1/reload/discard: extensions.json goes back
// to what the daemon last read or wrote; the edited file is kept.
func (a *Handler) discardEdits(w http.ResponseWriter, r *http.Request) {
	rev, err := a.host.DiscardHandEdits()
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, apitype.WriteResult{Revision: rev})
}

package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
)

// The session API: for agent runtimes that hold a session of their own
// (R-SES-1): its catalog in the format their model wants, calls, turn
// markers and an event stream.

func (a *Handler) newSession(w http.ResponseWriter, r *http.Request) {
	var req apitype.NewSessionRequest
	if r.ContentLength != 0 && !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	s, err := a.host.NewSession(r.Context(), req.Off)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.Info())
}

// session finds the session of the request, or renders the error.
func (a *Handler) session(w http.ResponseWriter, r *http.Request) *host.Session {
	s, err := a.host.Session(r.PathValue("id"))
	if err != nil {
		a.renderError(w, r, err)
		return nil
	}
	return s
}

func (a *Handler) getSession(w http.ResponseWriter, r *http.Request) {
	if s := a.session(w, r); s != nil {
		writeJSON(w, http.StatusOK, s.Info())
	}
}

func (a *Handler) endSession(w http.ResponseWriter, r *http.Request) {
	if err := a.host.EndSession(r.PathValue("id")); err != nil {
		a.renderError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *Handler) sessionTools(w http.ResponseWriter, r *http.Request) {
	s := a.session(w, r)
	if s == nil {
		return
	}
	// No event number: a session holds catalog changes back during a turn,
	// so its list may be older than any number read beside it.
	writeTools(w, r, s.Tools(), nil, 0)
}

func (a *Handler) sessionCall(w http.ResponseWriter, r *http.Request) {
	s := a.session(w, r)
	if s == nil {
		return
	}
	var req apitype.CallRequest
	if !decodeBody(w, r, maxCallBody, &req) {
		return
	}
	res, err := s.Call(r.Context(), req.Name, req.Arguments)
	a.writeCall(w, r, res, err)
}

func (a *Handler) sessionTurn(w http.ResponseWriter, r *http.Request) {
	s := a.session(w, r)
	if s == nil {
		return
	}
	var req apitype.TurnRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	if err := s.Turn(req.Event); err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, s.Info())
}

// sessionEvents streams the events that concern the session: its servers'
// states and "capabilities changed" — held back while a turn runs and sent
// at its end.
func (a *Handler) sessionEvents(w http.ResponseWriter, r *http.Request) {
	s := a.session(w, r)
	if s == nil {
		return
	}
	streamEvents(w, r, a.host, s.Deferred(), func(ev apitype.Event) bool {
		if ev.Type == apitype.EventStderr || !s.Concerns(ev) {
			return false
		}
		// A catalog change during a turn is announced at its end.
		return ev.Type != apitype.EventCatalog || !s.InTurn()
	})
}

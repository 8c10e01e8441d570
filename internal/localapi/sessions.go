package localapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
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
	entries := s.Tools()
	if format := r.URL.Query().Get("format"); format != "" {
		raw, err := catalog.Render(entries, format)
		if err != nil {
			writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, raw)
		return
	}
	out := apitype.ToolList{Tools: make([]apitype.Tool, 0, len(entries))}
	for _, e := range entries {
		out.Tools = append(out.Tools, host.APITool(e))
	}
	writeJSON(w, http.StatusOK, out)
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
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		a.renderError(w, r, err)
		return
	}
	raw, err := json.Marshal(res)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apitype.CallResult{Result: raw})
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
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, apitype.ErrorBody{Code: apitype.CodeInternal, Message: "streaming is not supported"})
		return
	}
	ch, cancel := a.host.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": plexus session events\n\n")
	fl.Flush()
	send := func(ev apitype.Event) bool {
		data, err := json.Marshal(ev)
		if err != nil {
			return true
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-s.Deferred():
			if !send(apitype.Event{Type: apitype.EventCatalog, Time: time.Now()}) {
				return
			}
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if ev.Type == apitype.EventStderr || !s.Concerns(ev) {
				continue
			}
			if ev.Type == apitype.EventCatalog && s.InTurn() {
				continue // announced at the end of the turn
			}
			if !send(ev) {
				return
			}
		}
	}
}

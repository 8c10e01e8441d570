package localapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
)

// events streams apitype.Events as server-sent events until the client goes
// away or falls too far behind (the stream then ends; the client reconnects
// and reads the state afresh).
func (a *Handler) events(w http.ResponseWriter, r *http.Request) {
	streamEvents(w, r, a.host, nil, func(apitype.Event) bool { return true })
}

// streamEvents is the settings API's event stream: it subscribes before
// the headers go out (so a client that saw them misses nothing), then
// sends every event keep passes, plus one EventCatalog each time extra
// fires, with keep-alive comments while idle (eventstream.go).
func streamEvents(w http.ResponseWriter, r *http.Request, h *host.Host, extra <-chan struct{}, keep func(apitype.Event) bool) {
	if !canStream(w) {
		writeError(w, http.StatusInternalServerError, apitype.ErrorBody{Code: apitype.CodeInternal, Message: "streaming is not supported"})
		return
	}
	ch, cancel := h.Subscribe()
	defer cancel()
	s := openEventStream(w, "plexus events") // eventstream.go
	send := func(ev apitype.Event) bool {
		data, err := json.Marshal(ev)
		if err != nil {
			return true
		}
		return s.send(ev.Type, data)
	}
	follow(r, s, ch, func(ev apitype.Event) bool { return !keep(ev) || send(ev) }, extra, func() bool {
		return send(apitype.Event{Type: apitype.EventCatalog, Time: time.Now()})
	})
}

func (a *Handler) logs(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	lines, next, err := a.host.Logs(name)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	if lines == nil {
		lines = []string{}
	}
	writeJSON(w, http.StatusOK, apitype.LogLines{Server: name, Lines: lines, NextSeq: next})
}

func (a *Handler) reload(w http.ResponseWriter, r *http.Request) {
	rev, err := a.host.Reload(r.Context())
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, apitype.WriteResult{Revision: rev})
}

func (a *Handler) restart(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := a.host.Restart(r.Context(), name); err != nil {
		a.renderError(w, r, err)
		return
	}
	rev, _ := a.host.Servers()
	a.writeResult(w, name, rev, http.StatusOK)
}

package localapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
)

// keepAlive is how often an idle event stream gets a comment line, so that
// a dead client is noticed and proxies keep the stream open.
const keepAlive = 15 * time.Second

// events streams apitype.Events as server-sent events until the client goes
// away or falls too far behind (the stream then ends; the client reconnects
// and reads the state afresh).
func (a *Handler) events(w http.ResponseWriter, r *http.Request) {
	streamEvents(w, r, a.host, nil, func(apitype.Event) bool { return true })
}

// streamEvents is the one SSE writer: it subscribes before the headers go
// out (so a client that saw them misses nothing), then sends every event
// keep passes, plus one EventCatalog each time extra fires, with keep-alive
// comments while idle.
func streamEvents(w http.ResponseWriter, r *http.Request, h *host.Host, extra <-chan struct{}, keep func(apitype.Event) bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, apitype.ErrorBody{Code: apitype.CodeInternal, Message: "streaming is not supported"})
		return
	}
	ch, cancel := h.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": plexus events\n\n")
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
		case <-extra:
			if !send(apitype.Event{Type: apitype.EventCatalog, Time: time.Now()}) {
				return
			}
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if keep(ev) && !send(ev) {
				return
			}
		}
	}
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

package localapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
)

// auditFilter reads GET /v1/audit's query: kind, server, tool, member,
// outcome, since (RFC 3339, or a duration back from now: 10m), limit;
// team=1 reads every replica's records from the database store.
func auditFilter(r *http.Request) (audit.Filter, int, error) {
	q := r.URL.Query()
	f := audit.Filter{Kind: q.Get("kind"), Server: q.Get("server"), Tool: q.Get("tool"), Member: q.Get("member"), Outcome: q.Get("outcome")}
	if s := q.Get("since"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			f.Since = time.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339, s); err == nil {
			f.Since = t
		} else {
			return f, 0, fmt.Errorf("since: want a time (RFC 3339, 2026-12-06T21:00:00Z) or a duration back from now (10m), not %q", s)
		}
	}
	limit := 0
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100000 {
			return f, 0, fmt.Errorf("limit: want a number from 1 to 100000, not %q", s)
		}
		limit = n
	}
	return f, limit, nil
}

// auditRecords answers GET /v1/audit: the newest records that pass the
// filter, oldest first.
func (a *Handler) auditRecords(w http.ResponseWriter, r *http.Request) {
	f, limit, err := auditFilter(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	l := a.host.Audit()
	if !l.On() {
		writeJSON(w, http.StatusOK, apitype.AuditRecords{Records: []apitype.AuditRecord{}, Off: true})
		return
	}
	var recs []audit.Record
	var problems []string
	if r.URL.Query().Get("team") != "" {
		recs, problems, err = l.Team(r.Context(), f, limit)
	} else {
		recs, err = l.Last(f, limit)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, apitype.ErrorBody{Code: apitype.CodeInternal, Message: "reading the audit log: " + err.Error()})
		return
	}
	out := apitype.AuditRecords{Records: make([]apitype.AuditRecord, 0, len(recs)), Dropped: l.Dropped(), Problems: problems}
	for _, rec := range recs {
		out.Records = append(out.Records, apitype.AuditRecord(rec))
	}
	writeJSON(w, http.StatusOK, out)
}

// followAudit streams the records written from now on that pass the
// filter, as server-sent events of type "audit".
func (a *Handler) followAudit(w http.ResponseWriter, r *http.Request) {
	f, _, err := auditFilter(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	l := a.host.Audit()
	if !l.On() || !canStream(w) {
		writeError(w, http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: "the audit log is off",
			Hint: "`plexus settings` shows it; turn it on with `plexus settings set audit.enabled true`"})
		return
	}
	ch, stop := l.Follow()
	defer stop()
	s := openEventStream(w, "plexus audit") // eventstream.go
	follow(r, s, ch, func(rec audit.Record) bool {
		if !f.Match(rec) {
			return true
		}
		data, _ := json.Marshal(apitype.AuditRecord(rec))
		return s.send(apitype.EventAudit, data)
	}, nil, nil)
}

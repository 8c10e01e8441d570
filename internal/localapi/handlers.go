package localapi

import (
	"encoding/json"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/sandbox"
)

func (a *Handler) status(w http.ResponseWriter, r *http.Request) {
	rev, servers := a.host.Servers()
	st := apitype.Status{
		Version:        Version,
		PID:            os.Getpid(),
		Home:           a.host.Store().Home(),
		StartedAt:      a.host.StartedAt(),
		Revision:       rev,
		SecretRevision: a.host.Store().Creds().Revision,
		HTTPAddr:       a.HTTPAddr,
		Servers:        servers,
		Sandbox:        sandbox.Detect().Lines(),
		SettingsFile:   a.host.SettingsFile(),
	}
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, st)
}

func (a *Handler) listServers(w http.ResponseWriter, r *http.Request) {
	list := a.host.ServerList()
	setRevision(w, list.Revision)
	writeJSON(w, http.StatusOK, list)
}

func (a *Handler) getServer(w http.ResponseWriter, r *http.Request) {
	sc, err := a.host.Server(r.PathValue("name"))
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	setRevision(w, sc.Revision)
	writeJSON(w, http.StatusOK, sc)
}

func (a *Handler) addServer(w http.ResponseWriter, r *http.Request) {
	a.put(w, r, "", true)
}

func (a *Handler) putServer(w http.ResponseWriter, r *http.Request) {
	a.put(w, r, r.PathValue("name"), false)
}

func (a *Handler) put(w http.ResponseWriter, r *http.Request, name string, create bool) {
	based, err := ifMatch(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	var req apitype.PutServerRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	if create {
		name = req.Name
	} else if req.Name != "" && req.Name != name {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: "renaming a server is not supported: remove it and add it under the new name"})
		return
	}
	rev, err := a.host.PutServer(r.Context(), host.PutRequest{
		Name: name, Config: req.Config, Based: based, Create: create, NoVerify: req.NoVerify, Secrets: req.Secrets, NeedsApproval: req.Pending,
	})
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	a.writeResult(w, name, rev, map[bool]int{true: http.StatusCreated, false: http.StatusOK}[create])
}

func (a *Handler) writeResult(w http.ResponseWriter, name string, rev int64, status int) {
	res := apitype.WriteResult{Revision: rev, EventSeq: a.host.EventSeq()}
	if sc, err := a.host.Server(name); err == nil {
		res.Server, res.EventSeq = &sc.Status, sc.Status.EventSeq
	}
	setRevision(w, rev)
	writeJSON(w, status, res)
}

func (a *Handler) deleteServer(w http.ResponseWriter, r *http.Request) {
	based, err := ifMatch(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	rev, err := a.host.DeleteServer(r.PathValue("name"), based)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, apitype.WriteResult{Revision: rev, EventSeq: a.host.EventSeq()})
}

func (a *Handler) setEnabled(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		based, err := ifMatch(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
			return
		}
		name := r.PathValue("name")
		rev, err := a.host.SetEnabled(r.Context(), name, on, based)
		if err != nil {
			a.renderError(w, r, err)
			return
		}
		a.writeResult(w, name, rev, http.StatusOK)
	}
}

func (a *Handler) tools(w http.ResponseWriter, r *http.Request) {
	a.host.Activity()
	// Read before the catalog, the number is one the list is at least as
	// new as (apitype.ToolList.EventSeq).
	seq := a.host.EventSeq()
	entries, warnings, err := a.host.Tools(r.URL.Query().Get("server"))
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeTools(w, r, entries, warnings, seq)
}

// writeTools writes a catalog as a ToolList, as new as event seq, or
// rendered in the format the query asks for (mcp, openai, anthropic).
func writeTools(w http.ResponseWriter, r *http.Request, entries []catalog.Entry, warnings []string, seq int64) {
	if format := r.URL.Query().Get("format"); format != "" {
		raw, err := catalog.Render(entries, format)
		if err != nil {
			writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, raw)
		return
	}
	out := apitype.ToolList{Tools: make([]apitype.Tool, 0, len(entries)), Warnings: warnings, EventSeq: seq}
	for _, e := range entries {
		out.Tools = append(out.Tools, host.APITool(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Handler) call(w http.ResponseWriter, r *http.Request) {
	a.host.Activity()
	var req apitype.CallRequest
	if !decodeBody(w, r, maxCallBody, &req) {
		return
	}
	if len(req.Arguments) > 0 && req.Arguments[0] != '{' && string(req.Arguments) != "null" {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: "arguments must be a JSON object"})
		return
	}
	res, err := a.host.Call(r.Context(), req.Name, req.Arguments)
	a.writeCall(w, r, res, err)
}

// writeCall writes a call's result, or its error.
func (a *Handler) writeCall(w http.ResponseWriter, r *http.Request, res *mcp.CallToolResult, err error) {
	if err != nil {
		if r.Context().Err() != nil {
			return // the caller is gone; the call was cancelled upstream
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

func (a *Handler) resources(w http.ResponseWriter, r *http.Request) {
	a.host.Activity()
	res, err := a.host.Resources(r.URL.Query().Get("server"))
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	if res == nil {
		res = []apitype.Resource{}
	}
	writeJSON(w, http.StatusOK, apitype.ResourceList{Resources: res})
}

func (a *Handler) readResource(w http.ResponseWriter, r *http.Request) {
	var req apitype.ReadResourceRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	res, err := a.host.ReadResource(r.Context(), req.Server, req.URI)
	a.writeUpstream(w, r, res, err, func(raw json.RawMessage) any { return apitype.ReadResourceResult{Result: raw} })
}

func (a *Handler) prompts(w http.ResponseWriter, r *http.Request) {
	a.host.Activity()
	res, err := a.host.Prompts(r.URL.Query().Get("server"))
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	if res == nil {
		res = []apitype.Prompt{}
	}
	writeJSON(w, http.StatusOK, apitype.PromptList{Prompts: res})
}

func (a *Handler) getPrompt(w http.ResponseWriter, r *http.Request) {
	var req apitype.GetPromptRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	res, err := a.host.GetPrompt(r.Context(), req.Server, req.Name, req.Arguments)
	a.writeUpstream(w, r, res, err, func(raw json.RawMessage) any { return apitype.GetPromptResult{Result: raw} })
}

// writeUpstream writes an upstream result wrapped by wrap, or the error.
func (a *Handler) writeUpstream(w http.ResponseWriter, r *http.Request, res any, err error, wrap func(json.RawMessage) any) {
	if err != nil {
		a.renderUpstreamError(w, r, err)
		return
	}
	raw, err := json.Marshal(res)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wrap(raw))
}

func (a *Handler) listSecrets(w http.ResponseWriter, r *http.Request) {
	c := a.host.Store().Creds()
	setRevision(w, c.Revision)
	writeJSON(w, http.StatusOK, apitype.SecretList{Revision: c.Revision, Names: c.Names()})
}

func (a *Handler) setSecret(w http.ResponseWriter, r *http.Request) {
	based, err := ifMatch(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	var req apitype.SetSecretRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	rev, err := a.host.SetSecret(r.PathValue("name"), req.Value, based)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apitype.WriteResult{Revision: rev})
}

func (a *Handler) deleteSecret(w http.ResponseWriter, r *http.Request) {
	based, err := ifMatch(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	rev, err := a.host.DeleteSecret(r.PathValue("name"), based)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apitype.WriteResult{Revision: rev})
}

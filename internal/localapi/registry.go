package localapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/registry"
)

// registryCacheDir is where the daemon keeps registry answers, under its
// home.
const registryCacheDir = "registry-cache"

// registryClient is the daemon's one client of MCP registries, made on
// first use with its cache under the home.
func (a *Handler) registryClient() *registry.Client {
	a.regOnce.Do(func() {
		if a.Registry == nil {
			a.Registry = registry.NewClient(registry.OpenCache(filepath.Join(a.host.Store().Home(), registryCacheDir)))
		}
	})
	return a.Registry
}

// registryURL is the registry the settings name.
func (a *Handler) registryURL() string { return a.host.Store().Config().MCP.RegistryURL() }

// listRegistry is GET /v1/registry/servers?search=TEXT&cursor=C&limit=N
// [&refresh=1]: one page of the registry's servers.
func (a *Handler) listRegistry(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	query := registry.Query{Search: q.Get("search"), Cursor: q.Get("cursor"), Refresh: q.Get("refresh") == "1"}
	if len(query.Search) > 200 || len(query.Cursor) > 1024 {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: "the search or the cursor is too long"})
		return
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > registry.MaxLimit {
			writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
				Message: "limit must be a number from 1 to " + strconv.Itoa(registry.MaxLimit)})
			return
		}
		query.Limit = n
	}
	page, src, err := a.registryClient().List(r.Context(), a.registryURL(), query)
	if err != nil {
		a.registryError(w, err)
		return
	}
	out := apitype.RegistryList{Servers: []apitype.RegistryServer{}, NextCursor: page.NextCursor, Skipped: page.Skipped, Source: sourceOut(src)}
	for _, e := range page.Entries {
		out.Servers = append(out.Servers, registryServerOut(e, false))
	}
	writeJSON(w, http.StatusOK, out)
}

// showRegistry is GET /v1/registry/servers/{name}?version=V[&refresh=1]:
// one version of a server (the latest by default), with its server.json,
// and the versions there are.
func (a *Handler) showRegistry(w http.ResponseWriter, r *http.Request) {
	name, version, ok := registryRef(w, r.PathValue("name"), r.URL.Query().Get("version"))
	if !ok {
		return
	}
	refresh := r.URL.Query().Get("refresh") == "1"
	c, base := a.registryClient(), a.registryURL()
	e, src, err := c.Get(r.Context(), base, name, version, refresh)
	if err != nil {
		a.registryError(w, err)
		return
	}
	out := apitype.RegistryShow{Server: registryServerOut(e, true), Source: sourceOut(src)}
	// The versions are a courtesy: a registry without the route, or one
	// that fails now, still shows the server.
	if vs, _, err := c.Versions(r.Context(), base, name, refresh); err == nil {
		for _, v := range vs {
			out.Versions = append(out.Versions, v.Server.Version)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// registryRef checks a registry server's name and version from a request.
func registryRef(w http.ResponseWriter, name, version string) (string, string, bool) {
	if !registry.ValidName(name) {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: "a registry server's name is NAMESPACE/NAME, such as io.github.github/github-mcp-server",
			Hint:    "`plexus search TEXT` finds it"})
		return "", "", false
	}
	if version == "" {
		version = "latest"
	}
	if !registry.ValidVersion(version) {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: "a version is letters, digits and . + _ ~ -, such as 1.2.0"})
		return "", "", false
	}
	return name, version, true
}

// Bounds of a plan request's values.
const (
	maxPlanValues = 256
	maxPlanBody   = 256 << 10
)

// planRegistry is POST /v1/registry/plan: a registry server translated
// into a Plexus server, with the inputs it takes. Nothing is saved.
func (a *Handler) planRegistry(w http.ResponseWriter, r *http.Request) {
	var req apitype.RegistryPlanRequest
	if !decodeBody(w, r, maxPlanBody, &req) {
		return
	}
	name, version, ok := registryRef(w, req.Name, req.Version)
	if !ok {
		return
	}
	n := 0
	for _, vs := range req.Values {
		n += len(vs)
	}
	if n > maxPlanValues || len(req.Secrets) > maxPlanValues || req.Option < 0 {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: "too many values, or a negative option"})
		return
	}
	e, src, err := a.registryClient().Get(r.Context(), a.registryURL(), name, version, false)
	if err != nil {
		a.registryError(w, err)
		return
	}
	cfg := a.host.Store().Config()
	server := req.Server
	if server == "" {
		server = freeName(registry.SuggestName(e.Server.Name), cfg.MCP.Servers)
	}
	home, _ := os.UserHomeDir()
	treq := registry.Request{Server: server, Option: req.Option, Values: req.Values, Secrets: map[string]bool{}, Home: home}
	for _, k := range req.Secrets {
		treq.Secrets[k] = true
	}
	plan, err := registry.Translate(e.Server, treq)
	if err == nil {
		// An optional secret stored already is referred to: it is there.
		again := false
		for _, f := range plan.Fields {
			if f.Secret && f.Var != "" && !treq.Secrets[f.Key] && a.stored(f.Var) {
				treq.Secrets[f.Key], again = true, true
			}
		}
		if again {
			plan, err = registry.Translate(e.Server, treq)
		}
	}
	if err != nil {
		translateError(w, e.Server.Name, err)
		return
	}
	raw, err := json.Marshal(plan.Config)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	_, taken := cfg.MCP.Servers[server]
	out := apitype.RegistryPlan{Name: e.Server.Name, Version: e.Server.Version, Server: server, NameTaken: taken,
		Option: optionOut(plan.Option), Options: optionsOut(registry.Options(e.Server)), Config: raw,
		Fields: []apitype.RegistryField{}, Missing: plan.Missing, Notes: plan.Notes, Status: e.Status, Source: sourceOut(src)}
	if out.Missing == nil {
		out.Missing = []string{}
	}
	if e.Status == "deprecated" || e.Status == "deleted" {
		note := "the registry marks this server " + e.Status
		if e.StatusMessage != "" {
			note += ": " + e.StatusMessage
		}
		out.Notes = append([]string{note}, out.Notes...)
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for _, f := range plan.Fields {
		out.Fields = append(out.Fields, apitype.RegistryField{Key: f.Key, Label: f.Label, Description: f.Description,
			Required: f.Required, Secret: f.Secret, Repeated: f.Repeated, Format: f.Format, Default: f.Default,
			Choices: f.Choices, Placeholder: f.Placeholder, Value: f.Value, Var: f.Var, Stored: f.Var != "" && a.stored(f.Var),
			Omitted: f.Omitted})
	}
	writeJSON(w, http.StatusOK, out)
}

// stored reports whether the managed variable name holds a value.
func (a *Handler) stored(name string) bool {
	_, ok := a.host.Store().LookupSecret(name)
	return ok
}

// freeName is name, or name-2, name-3… when a server has it.
func freeName(name string, servers map[string]config.Server) string {
	if _, taken := servers[name]; !taken {
		return name
	}
	for i := 2; ; i++ {
		n := name + "-" + strconv.Itoa(i)
		if len(n) > 32 {
			n = name[:32-len(strconv.Itoa(i))-1] + "-" + strconv.Itoa(i)
		}
		if _, taken := servers[n]; !taken {
			return n
		}
	}
}

// translateError renders a registry server that cannot become a Plexus
// server: one Plexus cannot run (refused), values that do not fit, or an
// entry that makes no valid settings.
func translateError(w http.ResponseWriter, name string, err error) {
	var refused *registry.RefusedError
	var input *registry.InputError
	var cfgErr *config.Error
	switch {
	case errors.As(err, &refused):
		hint := "`plexus show " + name + "` lists its options"
		if len(refused.Others) > 0 {
			hint = "choose another with --option N (`plexus show " + name + "` lists them)"
		}
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error(), Hint: hint})
	case errors.As(err, &input):
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: "the value of " + err.Error(),
			Problems: []apitype.Problem{{Path: "values." + input.Key, Message: input.Msg}}})
	case errors.As(err, &cfgErr):
		body := apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()}
		for _, p := range cfgErr.Problems {
			body.Problems = append(body.Problems, apitype.Problem{Path: p.Path, Message: p.Message})
		}
		writeError(w, http.StatusBadRequest, body)
	default:
		writeError(w, http.StatusBadGateway, apitype.ErrorBody{Code: apitype.CodeUpstream, Message: err.Error(),
			Hint: "the registry's entry cannot be added as it is; add the server by hand (`plexus add NAME -- COMMAND` or `plexus add NAME URL`)"})
	}
}

// registryError renders a registry that could not be asked or whose
// answer is not one.
func (a *Handler) registryError(w http.ResponseWriter, err error) {
	var re *registry.Error
	if !errors.As(err, &re) {
		writeError(w, http.StatusInternalServerError, apitype.ErrorBody{Code: apitype.CodeInternal, Message: err.Error()})
		return
	}
	hint := "check the registry's address: `plexus settings get registry.url` (`plexus settings unset registry.url` is the official one)"
	switch {
	case re.NotFound:
		writeError(w, http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound, Message: re.Msg, Hint: "`plexus search TEXT` finds a server's name"})
	case re.Unreachable:
		writeError(w, http.StatusServiceUnavailable, apitype.ErrorBody{Code: apitype.CodeUnavailable,
			Message: re.Msg + "; nothing is cached for this yet", Hint: hint})
	default:
		writeError(w, http.StatusBadGateway, apitype.ErrorBody{Code: apitype.CodeUpstream, Message: re.Msg, Hint: hint})
	}
}

func sourceOut(s registry.Source) apitype.RegistrySource {
	out := apitype.RegistrySource{Registry: s.Registry, FetchedAt: s.FetchedAt, Cached: s.Cached, Offline: s.Offline, Reason: s.Reason}
	if !s.FetchedAt.IsZero() {
		out.AgeMs = max(0, time.Since(s.FetchedAt).Milliseconds())
	}
	return out
}

func registryServerOut(e registry.Entry, withJSON bool) apitype.RegistryServer {
	s := e.Server
	out := apitype.RegistryServer{Name: s.Name, Title: s.Title, Description: s.Description, Version: s.Version,
		Status: e.Status, StatusMessage: e.StatusMessage, WebsiteURL: s.WebsiteURL, IsLatest: e.IsLatest,
		Options: optionsOut(registry.Options(s))}
	if s.Repository != nil {
		out.Repository = s.Repository.URL
	}
	if !e.PublishedAt.IsZero() {
		out.PublishedAt = &e.PublishedAt
	}
	if !e.UpdatedAt.IsZero() {
		out.UpdatedAt = &e.UpdatedAt
	}
	if withJSON {
		out.ServerJSON = e.Raw
	}
	return out
}

func optionsOut(os []registry.Option) []apitype.RegistryOption {
	out := []apitype.RegistryOption{}
	for _, o := range os {
		out = append(out, optionOut(o))
	}
	return out
}

func optionOut(o registry.Option) apitype.RegistryOption {
	return apitype.RegistryOption{Index: o.Index, Kind: o.Kind, Label: o.Label, Transport: o.Transport, Runnable: o.Runnable, Reason: o.Reason}
}

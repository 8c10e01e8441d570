package host

import (
	"encoding/json"
	"sort"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// Servers returns every server's sanitized status, sorted by name, and the
// configuration revision they were built from.
func (h *Host) Servers() (int64, []apitype.ServerStatus) {
	l := h.ServerList()
	return l.Revision, l.Servers
}

// EventSeq is the Seq of the newest event a status read now is as new as
// (apitype.ServerStatus.EventSeq).
func (h *Host) EventSeq() int64 { return h.snap.Load().eventSeq.Load() }

// ServerList is Servers with the Seq of the newest event the list is as
// new as (apitype.ServerList.EventSeq), all read from one snapshot.
func (h *Host) ServerList() apitype.ServerList {
	snap := h.snap.Load()
	out := make([]apitype.ServerStatus, 0, len(snap.names))
	for _, name := range snap.names {
		out = append(out, snap.status(name))
	}
	return apitype.ServerList{Revision: snap.cfg.Revision, EventSeq: snap.eventSeq.Load(), Servers: out}
}

// Server returns one server's stored configuration and status.
func (h *Host) Server(name string) (*apitype.ServerConfig, error) {
	snap := h.snap.Load()
	srv, ok := snap.servers[name]
	if !ok {
		return nil, &NotFoundError{What: "server", Name: name}
	}
	raw, err := json.Marshal(srv.Config())
	if err != nil {
		return nil, err
	}
	return &apitype.ServerConfig{Revision: snap.cfg.Revision, Name: name, Config: raw, Status: snap.status(name)}, nil
}

// serverStatus renders a server's status for the API. It never includes a
// resolved value: the URL is sanitized, headers and env appear as names.
func serverStatus(srv *supervisor.Server, sandboxByDefault bool) apitype.ServerStatus {
	sc := srv.Config()
	st := srv.Status()
	out := apitype.ServerStatus{
		Name:            srv.Name(),
		Type:            sc.Type,
		Enabled:         sc.IsEnabled(),
		State:           st.State,
		Since:           st.Since,
		LastError:       st.LastError,
		ExitCode:        st.ExitCode,
		HTTPStatus:      st.HTTPStatus,
		Restarts:        st.Restarts,
		CrashLooping:    st.CrashLooping,
		Installing:      st.Installing,
		Stderr:          st.Stderr,
		Warnings:        st.Warnings,
		ProtocolVersion: st.ProtocolVersion,
		ServerInfo:      st.ServerInfo,
		PID:             st.PID,
		RunsOn:          srv.RunsOn(),
	}
	if !st.LastErrorAt.IsZero() {
		t := st.LastErrorAt
		out.LastErrorAt = &t
	}
	if !st.NextTry.IsZero() {
		t := st.NextTry
		out.NextTryAt = &t
	}
	for _, e := range srv.Entries() {
		switch e.Kind {
		case catalog.KindTool:
			out.Tools++
		}
	}
	cat := srv.Catalog()
	out.Resources = len(cat.Resources) + len(cat.Templates)
	out.Prompts = len(cat.Prompts)
	if sc.Type == config.TypeStdio {
		out.Command = append([]string{sc.Command}, sc.Args...)
		out.EnvNames = sortedKeys(sc.Env)
		if sb, byDefault := sandboxOf(sc, sandboxByDefault); sb != nil {
			out.Sandbox = sb.Summary()
			if byDefault {
				out.Sandbox += " (a replica's default)"
			}
		}
	} else {
		out.URL = upstream.SanitizeURL(sc.URL)
		out.HeaderNames = sortedKeys(sc.Headers)
		if sc.BearerTokenEnvVar != "" {
			out.HeaderNames = append(out.HeaderNames, "Authorization")
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Tools returns the catalog, optionally of one server, sorted by name, with
// a warning for each enabled server that is not ready.
func (h *Host) Tools(server string) ([]catalog.Entry, []string, error) {
	snap := h.snap.Load()
	if server != "" {
		if _, ok := snap.servers[server]; !ok {
			return nil, nil, &NotFoundError{What: "server", Name: server}
		}
	}
	var out []catalog.Entry
	for _, e := range snap.tools {
		if server == "" || e.Server == server {
			out = append(out, *e)
		}
	}
	var warnings []string
	for _, name := range snap.names {
		if server != "" && name != server {
			continue
		}
		srv := snap.servers[name]
		st := srv.Status()
		st.State = snap.publishedState(name, st.State)
		switch st.State {
		case supervisor.StateReady, supervisor.StateDisabled, supervisor.StateIdle, supervisor.StateWaking:
			// Idle or starting on demand: its tools are listed and callable.
		default:
			w := name + " is " + st.State
			if st.LastError != "" {
				w += ": " + st.LastError
			}
			warnings = append(warnings, w)
		}
		if len(snap.pins.decisions[name].Held) > 0 {
			warnings = append(warnings, heldWarning(snap.status(name)))
		}
	}
	return out, warnings, nil
}

// APITool renders a catalog entry for the API.
func APITool(e catalog.Entry) apitype.Tool {
	return apitype.Tool{
		Name: e.Name, Server: e.Server, Tool: e.Tool, Title: e.Title, Description: e.Description,
		InputSchema: e.InputSchema, OutputSchema: e.OutputSchema, Annotations: e.Annotations, Kind: e.Kind,
	}
}

// Resources lists resources and templates, optionally of one server.
func (h *Host) Resources(server string) ([]apitype.Resource, error) {
	snap := h.snap.Load()
	var out []apitype.Resource
	for _, name := range snap.names {
		if server != "" && name != server {
			continue
		}
		cat := snap.servers[name].Catalog()
		for _, r := range cat.Resources {
			out = append(out, apitype.Resource{Server: name, URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
		for _, r := range cat.Templates {
			out = append(out, apitype.Resource{Server: name, URI: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Template: true})
		}
	}
	if server != "" {
		if _, ok := snap.servers[server]; !ok {
			return nil, &NotFoundError{What: "server", Name: server}
		}
	}
	return out, nil
}

// Prompts lists prompts, optionally of one server.
func (h *Host) Prompts(server string) ([]apitype.Prompt, error) {
	snap := h.snap.Load()
	if server != "" {
		if _, ok := snap.servers[server]; !ok {
			return nil, &NotFoundError{What: "server", Name: server}
		}
	}
	var out []apitype.Prompt
	for _, name := range snap.names {
		if server != "" && name != server {
			continue
		}
		for _, p := range snap.servers[name].Catalog().Prompts {
			ap := apitype.Prompt{Server: name, Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				ap.Arguments = append(ap.Arguments, apitype.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			out = append(out, ap)
		}
	}
	return out, nil
}

// Logs returns a server's kept stderr lines and the next sequence number.
func (h *Host) Logs(name string) ([]string, int64, error) {
	srv, ok := h.snap.Load().servers[name]
	if !ok {
		return nil, 0, &NotFoundError{What: "server", Name: name}
	}
	lines, next := srv.Logs()
	return lines, next, nil
}

// LiveConfig is the saved configuration, shared, never mutated — read it,
// do not change it. Cheaper than Store().Config(), which copies, for
// readers on a hot path. Unlike the snapshot's, it includes a reload that
// changed no server (the face's gates and profiles, say).
func (h *Host) LiveConfig() *config.File { return h.opts.Store.Shared() }

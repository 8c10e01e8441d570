package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/host"
)

func (a *Handler) getSettings(w http.ResponseWriter, r *http.Request) {
	s := a.host.Settings()
	setRevision(w, s.Revision)
	writeJSON(w, http.StatusOK, settingsOut(s))
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
	in := host.Settings{CallTimeoutMs: req.CallTimeoutMs, RetryMs: req.RetryMs, OAuthClientMetadataURL: req.OAuthClientMetadataURL, Names: req.Names}
	if req.Face != nil {
		in.Face = &config.Face{AllowExternalCall: req.Face.AllowExternalCall, AllowWrite: req.Face.AllowWrite,
			SessionIdleMs: req.Face.SessionIdleMs, MaxSessions: req.Face.MaxSessions}
	}
	if req.Profiles != nil {
		in.Profiles = make(map[string]config.Profile, len(req.Profiles))
		for name, p := range req.Profiles {
			in.Profiles[name] = config.Profile{Servers: p.Servers, Naming: p.Naming, MetaTools: p.MetaTools, ControlTools: p.ControlTools,
				Users: p.Users, Groups: p.Groups}
		}
	}
	if req.Registry != nil {
		in.Registry = &config.Registry{URL: req.Registry.URL}
	}
	if req.Tracing != nil {
		in.Tracing = &config.Tracing{Enabled: req.Tracing.Enabled, Protocol: req.Tracing.Protocol}
	}
	if req.Policy != nil {
		in.Policy = policyIn(req.Policy)
	}
	if req.Audit != nil {
		on := req.Audit.Enabled
		in.Audit = &config.Audit{Enabled: &on, OTLP: req.Audit.OTLP}
	}
	rev, err := a.host.SetSettings(in, based)
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	s := a.host.Settings()
	setRevision(w, rev)
	out := settingsOut(s)
	out.Revision = rev
	writeJSON(w, http.StatusOK, out)
}

// settingsOut is the host's settings on the wire.
func settingsOut(s host.Settings) apitype.Settings {
	out := apitype.Settings{Revision: s.Revision, CallTimeoutMs: s.CallTimeoutMs, RetryMs: s.RetryMs, Face: &apitype.FaceSettings{},
		Profiles: map[string]apitype.Profile{}, OAuthClientMetadataURL: s.OAuthClientMetadataURL, Names: s.Names}
	if s.Face != nil {
		out.Face = &apitype.FaceSettings{AllowExternalCall: s.Face.AllowExternalCall, AllowWrite: s.Face.AllowWrite,
			SessionIdleMs: s.Face.SessionIdleMs, MaxSessions: s.Face.MaxSessions}
	}
	if s.Registry != nil {
		out.Registry = &apitype.RegistrySettings{URL: s.Registry.URL}
	}
	if s.Tracing != nil {
		out.Tracing = &apitype.TracingSettings{Enabled: s.Tracing.Enabled, Protocol: s.Tracing.Protocol}
	}
	out.Policy = policyOut(s.Policy)
	if s.Audit != nil {
		out.Audit = &apitype.AuditSettings{Enabled: s.Audit.Enabled == nil || *s.Audit.Enabled, OTLP: s.Audit.OTLP}
	}
	for name, p := range s.Profiles {
		out.Profiles[name] = apitype.Profile{Servers: p.Servers, Naming: p.Naming, MetaTools: p.MetaTools, ControlTools: p.ControlTools,
			Users: p.Users, Groups: p.Groups}
	}
	return out
}

// policyIn is mcp.policy from the wire.
func policyIn(p *apitype.PolicySettings) *config.Policy {
	out := &config.Policy{}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, config.PolicyRule(r))
	}
	for _, l := range p.Limits {
		out.Limits = append(out.Limits, config.RateLimit(l))
	}
	return out
}

// policyOut is mcp.policy on the wire: empty lists, never null.
func policyOut(p *config.Policy) *apitype.PolicySettings {
	out := &apitype.PolicySettings{Rules: []apitype.PolicyRule{}, Limits: []apitype.RateLimit{}}
	if p == nil {
		return out
	}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, apitype.PolicyRule(r))
	}
	for _, l := range p.Limits {
		out.Limits = append(out.Limits, apitype.RateLimit(l))
	}
	return out
}

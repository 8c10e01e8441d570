package host

import (
	"maps"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
)

// Settings are the section-wide settings of mcp in extensions.json that a
// person edits from a front end.
type Settings struct {
	Revision      int64
	CallTimeoutMs int
	RetryMs       int
	// OAuthClientMetadataURL is mcp.oauthClientMetadataUrl; nil in
	// SetSettings keeps it.
	OAuthClientMetadataURL *string
	// Face is the face's gates; nil in SetSettings keeps them.
	Face *config.Face
	// Profiles are mcp.profiles; nil in SetSettings keeps them, an empty
	// map removes them all.
	Profiles map[string]config.Profile
	// Registry is mcp.registry; nil in SetSettings keeps it, a URL of ""
	// (or the official one's) restores the default.
	Registry *config.Registry
	// Names is mcp.names, config.NamesReadable or config.NamesHashed;
	// "" in SetSettings keeps it.
	Names string
	// Tracing is mcp.tracing (applied at once when it changes); nil in
	// SetSettings keeps it, a zero one removes it (off).
	Tracing *config.Tracing
	// Policy is mcp.policy (rules and rate limits, gate.go); nil in
	// SetSettings keeps it, an empty one removes it.
	Policy *config.Policy
	// Audit is mcp.audit (applied at once by the daemon: store.OnConfig), Enabled always
	// spelled out; nil in SetSettings keeps it. SetSettings takes its
	// Enabled and OTLP and keeps the file's bounds.
	Audit *config.Audit
}

// namesOf is cfg's naming scheme, the default spelled out.
func namesOf(cfg *config.File) string {
	if cfg.MCP.Names == "" {
		return config.NamesReadable
	}
	return cfg.MCP.Names
}

// Settings returns the section-wide settings (0: the default).
func (h *Host) Settings() Settings {
	cur := h.opts.Store.Config()
	face := config.Face{}
	if cur.MCP.Face != nil {
		face = *cur.MCP.Face
	}
	doc := cur.MCP.OAuthClientMetadataURL
	s := Settings{Revision: cur.Revision, CallTimeoutMs: cur.MCP.CallTimeoutMs, RetryMs: cur.MCP.RetryMs,
		OAuthClientMetadataURL: &doc, Face: &face, Profiles: maps.Clone(cur.MCP.Profiles), Registry: &config.Registry{URL: cur.MCP.RegistryURL()},
		Names: namesOf(cur), Tracing: &config.Tracing{}}
	if cur.MCP.Tracing != nil {
		t := *cur.MCP.Tracing
		s.Tracing = &t
	}
	s.Policy = &config.Policy{}
	if cur.MCP.Policy != nil {
		s.Policy = cur.MCP.Policy.Clone()
	}
	on := cur.MCP.AuditOn()
	s.Audit = &config.Audit{Enabled: &on}
	if a := cur.MCP.Audit; a != nil {
		s.Audit.MaxFileBytes, s.Audit.MaxFiles, s.Audit.OTLP = a.MaxFileBytes, a.MaxFiles, a.OTLP
	}
	return s
}

// SetSettings saves the section-wide settings (0 restores the default).
// No server is restarted: calls and probes read them from the current
// configuration, so the next call uses the new timeout, and the face
// rebuilds a profile whose gates or composition changed on its next
// request.
func (h *Host) SetSettings(s Settings, based int64) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	cur := h.opts.Store.Config()
	if err := checkBased(cur, based); err != nil {
		return 0, err
	}
	next := cur.Clone()
	next.MCP.CallTimeoutMs = s.CallTimeoutMs
	next.MCP.RetryMs = s.RetryMs
	if s.OAuthClientMetadataURL != nil {
		next.MCP.OAuthClientMetadataURL = *s.OAuthClientMetadataURL
	}
	if s.Face != nil {
		next.MCP.Face = nil
		if *s.Face != (config.Face{}) {
			face := *s.Face
			next.MCP.Face = &face
		}
	}
	if s.Profiles != nil {
		next.MCP.Profiles = nil
		if len(s.Profiles) > 0 {
			next.MCP.Profiles = maps.Clone(s.Profiles)
		}
	}
	if s.Registry != nil {
		next.MCP.Registry = nil
		if u := s.Registry.URL; u != "" && strings.TrimRight(u, "/") != config.DefaultRegistryURL {
			next.MCP.Registry = &config.Registry{URL: u}
		}
	}
	if s.Tracing != nil {
		next.MCP.Tracing = nil
		if *s.Tracing != (config.Tracing{}) {
			t := *s.Tracing
			next.MCP.Tracing = &t
		}
	}
	if s.Policy != nil {
		next.MCP.Policy = nil
		if len(s.Policy.Rules) > 0 || len(s.Policy.Limits) > 0 {
			next.MCP.Policy = s.Policy.Clone()
		}
	}
	if s.Audit != nil {
		next.MCP.Audit = auditSettings(cur.MCP.Audit, s.Audit)
	}
	switch s.Names {
	case "":
	case config.NamesReadable:
		next.MCP.Names = "" // the default, left out of the file
	default:
		next.MCP.Names = s.Names // checked by Validate
	}
	if err := config.Validate(next); err != nil {
		return 0, err
	}
	rev, err := h.opts.Store.CommitConfig(next.Revision, next)
	if err != nil {
		return 0, err
	}
	committed := h.opts.Store.Config()
	h.serversMu.Lock()
	h.cfg = committed
	h.serversMu.Unlock()
	h.publish()
	h.log.Info("settings saved", "revision", rev)
	return rev, nil
}

// auditSettings is mcp.audit with set's switches and cur's bounds; nil
// when all of it is the default.
func auditSettings(cur, set *config.Audit) *config.Audit {
	a := config.Audit{OTLP: set.OTLP}
	if cur != nil {
		a.MaxFileBytes, a.MaxFiles = cur.MaxFileBytes, cur.MaxFiles
	}
	if set.Enabled != nil && !*set.Enabled {
		off := false
		a.Enabled = &off
	}
	if a == (config.Audit{}) {
		return nil
	}
	return &a
}

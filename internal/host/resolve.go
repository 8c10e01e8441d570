package host

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// lookup resolves a variable: the managed environment first, then the
// daemon's own environment (R-CFG-3).
func (h *Host) lookup(name string) (string, bool) {
	if v, ok := h.opts.Store.LookupSecret(name); ok {
		return v, true
	}
	return os.LookupEnv(name)
}

// resolve turns a server's configuration into a connection spec, resolving
// every reference. A missing variable is an error naming it; Plexus never
// connects without it. The returned spec's Secrets lists every resolved
// value, so that the upstream layer can redact them from stderr and errors.
func (h *Host) resolve(name string, sc config.Server, cfg *config.File, lookup func(string) (string, bool)) (upstream.Spec, error) {
	spec := upstream.Spec{
		Name:            name,
		Type:            sc.Type,
		StartupTimeout:  ms(sc.StartupTimeoutMs, config.DefaultStartupTimeoutMs),
		Logger:          h.log,
		ProtocolVersion: sc.ProtocolVersion,
	}
	var secrets []string
	get := func(v string) (string, error) {
		val, ok := lookup(v)
		if !ok {
			return "", &config.MissingVarError{Name: v}
		}
		if val != "" {
			secrets = append(secrets, val)
		}
		return val, nil
	}
	expand := func(s string) (string, error) {
		return config.Expand(s, func(n string) (string, bool) {
			v, err := get(n)
			return v, err == nil
		})
	}
	wrap := func(field string, err error) error {
		return fmt.Errorf("server %s: %s: %w", name, field, err)
	}

	switch sc.Type {
	case config.TypeStdio:
		if remote, err := h.placed(name); err != nil {
			return spec, wrap("placement", &PlacementError{err})
		} else if remote != nil {
			remote.apply(&spec)
			return spec, nil
		}
		spec.Argv = append([]string{sc.Command}, sc.Args...)
		spec.NpxDirect = sc.StartsNpxDirect()
		spec.Dir = sc.Cwd
		if spec.Dir == "" {
			spec.Dir = h.opts.Store.Home()
		}
		spec.Shim = h.opts.Shim
		spec.Env = map[string]string{}
		for k, ref := range sc.Env {
			if ref.Value != nil {
				// Not a secret: passed as written, and not redacted.
				spec.Env[k] = *ref.Value
				continue
			}
			v, err := get(ref.Env)
			if err != nil {
				return spec, wrap("env."+k, err)
			}
			spec.Env[k] = v
		}
		if sb, byDefault := sandboxOf(sc, h.opts.SandboxByDefault); sb != nil {
			pol, err := sandboxPolicy(name, *sb, h.opts.Store.Home(), sc.Cwd, h.opts.Secrets)
			if err != nil {
				return spec, wrap("sandbox", err)
			}
			pol.Default = byDefault
			spec.Sandbox = pol
			if sc.Cwd == "" {
				spec.Dir = "" // the private folder, made when it starts
			}
		}
	default:
		u, err := expand(sc.URL)
		if err != nil {
			return spec, wrap("url", err)
		}
		spec.URL = u
		spec.Headers = http.Header{}
		for k, v := range sc.Headers {
			var val string
			if v.Env != "" {
				val, err = get(v.Env)
			} else {
				val, err = expand(v.Text)
			}
			if err != nil {
				return spec, wrap("headers."+k, err)
			}
			spec.Headers.Set(k, val)
		}
		if sc.BearerTokenEnvVar != "" {
			tok, err := get(sc.BearerTokenEnvVar)
			if err != nil {
				return spec, wrap("bearerTokenEnvVar", err)
			}
			// A token stored with its scheme, as some servers' documents
			// tell people to give it, is not prefixed twice.
			if len(tok) > 7 && strings.EqualFold(tok[:7], "bearer ") {
				spec.Headers.Set("Authorization", tok)
			} else {
				spec.Headers.Set("Authorization", "Bearer "+tok)
			}
		}
		if err := h.authorize(&spec, sc, get); err != nil {
			return spec, wrap("oauth", err)
		}
	}
	spec.Secrets = secrets
	return spec, nil
}

// newServer builds the supervised server for a configuration. If the
// configuration cannot be resolved the server is returned marked failed,
// with the error, so that its status says why.
func (h *Host) newServer(name string, sc config.Server, cfg *config.File) (*supervisor.Server, error) {
	return h.newServerWith(name, sc, cfg, h.lookup)
}

// newServerWith is newServer resolving through lookup: a save that carries
// new secrets resolves against them before they are stored.
func (h *Host) newServerWith(name string, sc config.Server, cfg *config.File, lookup func(string) (string, bool)) (*supervisor.Server, error) {
	spec, err := h.resolve(name, sc, cfg, lookup)
	if gate := h.approvalGate(name, sc); gate != nil {
		err = gate // R-CAT-6: never started before a person approved it
	}
	limits := h.opts.Limits
	if sc.MaxDescriptionChars > 0 {
		limits.MaxDescription = sc.MaxDescriptionChars
	}
	var srv *supervisor.Server
	p := supervisor.Params{
		Name:       name,
		Config:     sc,
		Spec:       spec,
		Limits:     limits,
		Logger:     h.log,
		OnChange:   func() { h.serverChanged(srv) },
		OnStderr:   func(line string, seq int64) { h.emitStderr(name, line, seq) },
		NeedsLogin: func(err error) error { return h.loginNeeded(name, sc, err) },
	}
	if err == nil {
		h.onDemandParams(&p, sc)
	}
	srv = supervisor.New(p)
	if p.Cached != nil && srv.State() == supervisor.StateIdle {
		// The cache is outside input: a tool it lists that was never
		// pinned is not pinned from it (the server would not have shown
		// it): the server starts and lists its own.
		if _, unpinned := h.pins.store.Decide(name, pins.TrustOf(sc), srv.Entries(), nil); unpinned {
			h.log.Warn("catalog cache lists tools never pinned: not used, the server starts at once", "server", name)
			p.Cached = nil
			srv = supervisor.New(p)
		}
	}
	if err != nil && sc.IsEnabled() {
		srv.MarkFailed(err)
		if errors.As(err, new(*PlacementError)) {
			h.arrive(srv) // until it is replaced where it runs
		}
	}
	if _, gated := err.(*ApprovalError); gated && sc.IsEnabled() && h.opts.Store.Docs().Shared() {
		h.pins.gated.Store(srv, true) // refreshPins starts it once approved elsewhere
	}
	return srv, err
}

func ms(v, def int) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Millisecond
}

func mcpEnabled(cfg *config.File) bool {
	return cfg.MCP.Enabled == nil || *cfg.MCP.Enabled
}

// callTimeout is the server's callTimeoutMs, then the section's, then 60 s.
func callTimeout(sc config.Server, cfg *config.File) time.Duration {
	if sc.CallTimeoutMs > 0 {
		return ms(sc.CallTimeoutMs, 0)
	}
	return ms(cfg.MCP.CallTimeoutMs, config.DefaultCallTimeoutMs)
}

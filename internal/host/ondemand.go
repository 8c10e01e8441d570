package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/catcache"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// Servers that cost nothing until they are used. A shared stdio instance
// is started on demand by default (config.Server.OnDemand) once its catalog
// is known: its first start is eager and lists it, and the host keeps what
// it listed in the catalog cache (catcache, catalogs.json beside the
// pins). On the next daemon start such a server is built "idle" from the
// cache — its tools listed under their names, pinned as before — and the
// first use starts it (supervisor.Server.Use); after idleStopMs without a
// use it is stopped again. The supervisor owns those transitions; the host
// only chooses, per server, what it is given.

// openCatalogs opens the catalog cache of the store's home; nil (no cache:
// every server starts as configured) for a store without one. A cache that
// does not read is a log line and a fresh start.
func openCatalogs(opts Options) *catcache.Store {
	home := opts.Store.Home()
	if home == "" {
		return nil
	}
	c, err := catcache.Open(home)
	if err != nil {
		opts.Logger.Warn("catalog cache not read: servers started on demand start at once this time", "file", filepath.Join(home, catcache.FileName), "err", err)
	}
	return c
}

// onDemandParams fills what a shared instance of server name is given to
// start on demand and stop when idle; a per-session instance and a team's
// server run by another replica get none of it.
func (h *Host) onDemandParams(p *supervisor.Params, sc config.Server) {
	if sc.Instance == config.InstancePerSession || p.Spec.RunsOn != "" {
		return
	}
	name := p.Name
	key := catcache.Key(sc)
	cached := false
	if sc.OnDemand() {
		if e, ok := h.catalogs.Get(name, key); ok {
			p.Cached = &supervisor.Cached{Init: e.Init, Disc: upstream.Discovery{Tools: e.Tools, Resources: e.Resources, ResourceTemplates: e.Templates, Prompts: e.Prompts}}
			cached = true
		}
	}
	p.IdleStop = ms(sc.IdleStopAfterMs(), 0) // 0: never stopped when idle
	if !cached && sc.Type == config.TypeStdio && packageRunner(sc.Command, sc.Args) {
		p.FirstStartTimeout = ms(sc.InstallTimeoutMs, config.DefaultInstallTimeoutMs)
	}
	if h.catalogs != nil {
		p.OnListed = func(c supervisor.Cached) {
			e := catcache.Entry{Key: key, Listed: time.Now().UTC(), Init: c.Init, Tools: c.Disc.Tools,
				Resources: c.Disc.Resources, Templates: c.Disc.ResourceTemplates, Prompts: c.Disc.Prompts}
			if err := h.catalogs.Put(name, e); err != nil {
				h.log.Warn("catalog cache not saved: the server starts at once next time", "server", name, "err", err)
			}
		}
	}
}

// packageRunner reports whether a command runs a package it may first
// download: npx, uvx, bunx, pnpm dlx, yarn dlx, pipx run, uv tool run.
func packageRunner(command string, args []string) bool {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(command)), ".cmd")
	base = strings.TrimSuffix(base, ".exe")
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch base {
	case "npx", "uvx", "bunx", "pnpx":
		return true
	case "pnpm", "yarn":
		return first == "dlx"
	case "pipx":
		return first == "run"
	case "uv":
		return first == "tool" || first == "run"
	case "npm":
		return first == "exec" || first == "x"
	}
	return false
}

// use is the connection of srv for one use, starting it if it is idle;
// while the start is waited for, a caller that asked for progress is told
// (upstream.NotifyCaller). done ends the use.
func (h *Host) use(ctx context.Context, srv *supervisor.Server) (*upstream.Conn, func(), error) {
	return srv.Use(ctx, func(waited time.Duration) {
		upstream.NotifyCaller(ctx, waited.Seconds(), fmt.Sprintf("starting %s on demand (%s)", srv.Name(), waited.Round(time.Second)))
	})
}

// UseServer is the live connection to a server's shared instance for one
// use the catalog does not model (completion, a subscription), starting it
// if it is idle; done ends the use.
func (h *Host) UseServer(ctx context.Context, server string) (*upstream.Conn, func(), error) {
	srv, ok := h.snap.Load().servers[server]
	if !ok {
		return nil, nil, &NotFoundError{What: "server", Name: server}
	}
	return h.use(ctx, srv)
}

// KeepAwake holds a server's shared instance awake while on (a resource
// subscription named by key), or lets it go.
func (h *Host) KeepAwake(server, key string, on bool) {
	if srv, ok := h.snap.Load().servers[server]; ok {
		srv.Keep(key, on)
	}
}

// WantLogs asks a server's shared instance for log messages at level, now
// if it runs and whenever it starts again.
func (h *Host) WantLogs(ctx context.Context, server, level string) {
	if srv, ok := h.snap.Load().servers[server]; ok {
		srv.WantLogs(ctx, level)
	}
}

// Package daemon wires the Plexus daemon together: the home directory and its
// lock, the log file, the engine (host), and the settings API on the unix
// socket; and it owns the shutdown order.
//
// Shutdown order: stop following a shared store's changes (and, with the
// internal channel, the heartbeat and the lease claims); with the
// channel, hand the stdio servers over to the other replicas, serving
// them until those run them (a few seconds at most); stop accepting API
// requests (in-flight ones get a grace period) and, beside them, close
// the channel once the other replicas have followed the hand-over
// (peerstop.go, a grace of its own), then stop every server
// (each process group ended and reaped), then give up the leases still
// held (only now may another replica start them) and remove this
// replica's row, then close the store, remove the socket and release the
// lock.
package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/face"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/localapi"
	"github.com/plexus-mcp/plexus/internal/metrics"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// SocketName is the API socket's file name under the home directory.
const SocketName = "plexus.sock"

// Options configure the daemon.
type Options struct {
	Home string
	// Shim is the argv prefix of the lifeline shim for stdio servers.
	Shim []string
	// Stderr receives human-readable progress lines; nil discards them.
	Stderr *os.File
	// Listen is the loopback TCP address of the token-guarded endpoints
	// (metrics); "" means DefaultListen, "off" none. In team mode it may
	// be another address, which serves the face only, and the default
	// loopback address is served beside it (network.go).
	Listen string
	// LoopbackListen is the loopback address served beside a Listen
	// beyond loopback (the web page, the metrics); "" means DefaultListen.
	// Tests give 127.0.0.1:0, so as not to take the port of the daemon a
	// person runs on the same machine.
	LoopbackListen string
	// Version is reported to MCP clients of the face.
	Version string
	// SteadyProcs, if not 0, is how many threads run the daemon's Go code
	// once its servers have started (runtime.GOMAXPROCS; see settle).
	SteadyProcs int
	// Store is the database the daemon keeps its documents in, shared
	// with other replicas; none: files in Home.
	Store StoreOptions
	// Peer is the internal channel to the other replicas (with Store
	// only); none without Peer.Listen.
	Peer PeerOptions
	// StopDelay is how long the daemon, asked to stop, stays out of a
	// balancer's rotation (not ready) while it still serves everything,
	// before its shutdown begins: a Kubernetes pod's endpoint leaves the
	// Services in that time (a preStop delay, with no shell in the image).
	StopDelay time.Duration
	// MetricsListen, if set, is an address that serves GET /metrics alone,
	// without a token, for a scraper (metrics.go); beyond loopback only in
	// team mode.
	MetricsListen string
}

// Run runs the daemon until ctx is done, or until one of its servers fails.
// Its steps, in order: the home and its lock, the log, the temporary
// files of interrupted saves (removed), the settings and pins, the token,
// the socket, the engine and its faces, the loopback listener; then serve
// until the end, and shut down in the order written at the top of this
// file.
func Run(ctx context.Context, opts Options) error {
	start := time.Now()
	if err := store.EnsureHome(opts.Home); err != nil {
		return err
	}
	lock, err := acquireLock(opts.Home)
	if err != nil {
		return err
	}
	defer lock.release()
	log, closeLog, err := openLogger(opts)
	if err != nil {
		return err
	}
	defer closeLog()
	if err := removeStrays(opts.Home, log); err != nil {
		return err
	}
	st, pn, db, err := openState(ctx, opts.Home, opts.Store, log)
	if err != nil {
		return err
	}
	defer st.Docs().Close()
	// Traces (off unless the settings turn them on, applied again at each
	// change of them); the spans not yet sent are flushed after the
	// listeners have stopped.
	traces := tracing.NewExporter(opts.Version, log.With("component", "tracing"))
	if err := traces.Apply(ctx, st.Config().MCP.Tracing); err != nil {
		return err
	}
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := traces.Stop(flush); err != nil {
			log.Warn("tracing: spans not sent at shutdown", "err", err)
		}
	}()
	// The token: what every client sends, on the socket as on the
	// loopback address (localapi).
	token, err := loadToken(opts.Home)
	if err != nil {
		return err
	}
	// The audit log: written until the host has stopped (serve), then
	// flushed and closed before the store.
	replica, chain, sinks := teamAuditParts(db)
	otlpLogs := &auditOTLP{version: opts.Version, log: log.With("component", "audit")}
	otlpLogs.apply(ctx, st.Config().MCP)
	defer otlpLogs.stop()
	alog, err := openAudit(opts.Home, st.Config().MCP, replica, chain, append(sinks, otlpLogs), log)
	if err != nil {
		return err
	}
	// Tracing and the audit log follow the settings whoever changes them
	// (the API, a hand edit, another replica), under the store's lock.
	st.OnConfig(func(cfg *config.File) {
		if err := traces.Apply(ctx, cfg.MCP.Tracing); err != nil {
			log.Warn("tracing: the new settings could not start an exporter; tracing is off", "err", err)
		}
		applyAudit(ctx, alog, otlpLogs, cfg.MCP)
	})
	defer alog.Close()
	sock := filepath.Join(opts.Home, SocketName)
	ln, err := listenSocket(sock)
	if err != nil {
		return err
	}
	defer os.Remove(sock)
	p := newParts(opts, log, st, pn, alog, db != nil)
	p.api.Token = token
	pc, err := p.peerChannel(opts.Peer, db)
	if err != nil {
		ln.Close()
		return err
	}
	tcp, err := p.loopback(opts, token)
	if err == nil {
		tcp, err = p.metricsListener(opts, tcp)
	}
	if err != nil {
		ln.Close()
		pc.close()
		for _, t := range tcp {
			t.ln.Close()
		}
		return err
	}
	if a := tcp.addr(); a != "" {
		// A client that elicits only in URL mode is sent to the page to
		// approve a call (host/urlask.go).
		p.h.SetApprovalPage("http://" + a)
	}
	return p.serve(ctx, opts, ln, tcp, pc, func() {
		log.Info("daemon ready", "home", opts.Home, "store", storeKind(db), "socket", sock, "http", tcp.addr(), "pid", os.Getpid(),
			"servers", len(st.Config().MCP.Servers), "replica", pc.id(), "peer", pc.advertised(), "startup_ms", time.Since(start).Milliseconds(), "max_conns", connBudget())
	})
}

// openLogger opens the log file under the home and returns the daemon's
// logger: JSON to the file, and human text to opts.Stderr if set.
func openLogger(opts Options) (*slog.Logger, func() error, error) {
	logs, err := openLog(opts.Home)
	if err != nil {
		return nil, nil, err
	}
	handlers := []slog.Handler{slog.NewJSONHandler(logs, nil)}
	if opts.Stderr != nil {
		handlers = append(handlers, slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewMultiHandler(handlers...)), logs.Close, nil
}

// socketPathRoom is the room for a unix socket's path, its final NUL
// included, on the systems with the least (macOS and the BSDs; Linux has
// 108): a longer path fails to bind with an error that does not say why.
const socketPathRoom = 104

// listenSocket listens on the API socket, private to the user. We hold the
// lock, so a socket file left there belongs to a dead daemon.
func listenSocket(sock string) (net.Listener, error) {
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket: %w", err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil && len(sock) >= socketPathRoom {
		return nil, fmt.Errorf("listening on %s: %w: the socket's path is %d bytes, and a unix socket's may have at most %d on some systems (108 on Linux): choose a shorter PLEXUS_HOME", sock, err, len(sock), socketPathRoom-1)
	}
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", sock, err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		os.Remove(sock)
		return nil, fmt.Errorf("making the socket private: %w", err)
	}
	return ln, nil
}

// parts are the daemon's components, wired together.
type parts struct {
	log *slog.Logger
	h   *host.Host
	mtr *metrics.Metrics
	fc  *face.Face
	api *localapi.Handler
	hl  *health
	// mcp serves the face on the HTTP address: fc, or with the internal
	// channel its router, which sends a session another replica holds
	// there (peer.go).
	mcp  http.Handler
	team *teamSwitch
	// changed has a value after a request of the API changed something
	// (changes.go): the daemon settles again after it.
	changed chan struct{}
	// stopDelay is Options.StopDelay.
	stopDelay time.Duration
}

// newParts wires the daemon's components. A replica of a database store
// (team) sandboxes its stdio servers by default, and no sandboxed server
// reads the store's key or URL files (docs/team.md).
func newParts(opts Options, log *slog.Logger, st *store.Store, pn *pins.Store, alog *audit.Log, team bool) *parts {
	p := &parts{log: log, stopDelay: opts.StopDelay, changed: make(chan struct{}, 1)}
	p.mtr = metrics.New(hostSource{&p.h})
	p.h = host.New(host.Options{Store: st, Logger: log, Shim: opts.Shim, Observer: p.mtr, Pins: pn,
		SandboxByDefault: team, Secrets: opts.Store.secretFiles(), Audit: alog})
	// The MCP face, on the socket (for plexus mcp) and the loopback address.
	p.fc = face.New(p.h, log.With("component", "face"), opts.Version)
	p.fc.Observe(p.mtr.ObserveFace)
	p.api = localapi.New(p.h, log.With("component", "localapi"))
	p.hl = &health{log: log.With("component", "health")}
	p.mcp = p.fc
	p.team = &teamSwitch{h: p.h, face: p.fc, route: p.fc, log: p.log.With("component", "team")}
	return p
}

// tcpServer is one HTTP listener and the server that will serve it.
type tcpServer struct {
	srv *http.Server
	ln  net.Listener
	// pod is true for a team replica's pod address (network.go), false
	// for the loopback address.
	pod bool
}

// tcpServers are the daemon's HTTP listeners: none, the loopback one, or,
// for a team replica, its pod's address and (unless its port is taken) the
// loopback one beside it.
type tcpServers []*tcpServer

// addr is the loopback address, "" when there is none.
func (ts tcpServers) addr() string {
	for _, t := range ts {
		if !t.pod {
			return t.ln.Addr().String()
		}
	}
	return ""
}

// loopback listens on the TCP address of opts.Listen: the loopback
// address of the token-guarded endpoints, or in team mode a pod's
// address, which serves only the face (network.go) — then also on the
// default loopback address (opts.LoopbackListen), for the web page and the metrics, reached in
// the pod or through kubectl port-forward. It returns none when Listen is
// off, and leaves out a default loopback address that is taken (another
// daemon, another home): the daemon then runs on the socket alone rather
// than not at all, and says so.
func (p *parts) loopback(opts Options, token string) (tcpServers, error) {
	if opts.Listen == "off" {
		return nil, nil
	}
	addr := opts.Listen
	if addr == "" {
		addr = DefaultListen
	}
	tln, network, err := listenHTTP(addr, p.h.LiveConfig().Team != nil)
	switch {
	case err != nil && opts.Listen == "" && errors.Is(err, syscall.EADDRINUSE):
		p.log.Warn("loopback address in use: metrics are off", "addr", addr,
			"hint", "start with --listen 127.0.0.1:PORT to serve them elsewhere")
		return nil, nil
	case err != nil:
		return nil, err
	}
	lb := localapi.NewLoopback(token, p.log.With("component", "loopback"))
	lb.Handle("GET /metrics", p.mtr.Handler())
	lb.Handle(face.Path, p.mcp)
	lb.Handle(face.Path+"/", p.mcp)
	// Profiles of the running daemon, for `go tool pprof` with the token
	// (docs/performance.md).
	lb.Handle("/debug/pprof/", http.HandlerFunc(pprof.Index))
	lb.Handle("/debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	// The loopback address's switch is p.team, which the internal channel
	// shares (peer.go); a pod's address has one of its own, whose
	// fallbacks answer 404 (network.go). Both reach the face through
	// p.mcp, the internal channel's router when there is one.
	p.team.token = lb
	// Each address is served under limits of its own (limits.go).
	server := func(ln net.Listener, pod bool, h http.Handler) *tcpServer {
		l := limitTCP(ln, ln.Addr().String(), p.log)
		return &tcpServer{srv: l.Server(h, p.errorLog(), nil), ln: l, pod: pod}
	}
	if !network {
		return tcpServers{server(tln, false, loopbackMux(lb, p.team, p.api, p.changed, p.h.Audit(), p.hl, tln.Addr().String(), p.log))}, nil
	}
	// T7: beyond loopback only in team mode, and then only the face
	// behind the team's tokens, its metadata and the probes (network.go).
	p.log.Warn("listening beyond loopback: team mode serves only the face there, behind the team's tokens; the web page and metrics stay on loopback",
		"addr", tln.Addr().String())
	pod := &teamSwitch{h: p.h, face: p.fc, route: p.mcp, log: p.log.With("component", "team")}
	out := tcpServers{server(tln, true, networkMux(pod, p.hl))}
	beside := cmp.Or(opts.LoopbackListen, DefaultListen)
	local, err := net.Listen("tcp", beside)
	if err != nil {
		p.log.Warn("loopback address in use: the web page and metrics are off", "addr", beside, "err", err)
		return out, nil
	}
	return append(out, server(local, false, loopbackMux(lb, p.team, p.api, p.changed, p.h.Audit(), p.hl, local.Addr().String(), p.log))), nil
}

// errorLog is where net/http's servers report, as warnings of the log.
func (p *parts) errorLog() *log.Logger { return slog.NewLogLogger(p.log.Handler(), slog.LevelWarn) }

// serve starts the servers and serves the socket (and tcp's listeners)
// until ctx is done or a server fails, then shuts down. Every goroutine it
// starts belongs to one errgroup and is waited for.
func (p *parts) serve(ctx context.Context, opts Options, ln net.Listener, tcp tcpServers, pc *peerServer, ready func()) error {
	p.api.HTTPAddr = tcp.addr()
	p.api.Mount(face.Path, p.fc)
	p.api.Mount(face.Path+"/", p.fc)
	// The socket under limits of its own, apart from TCP's, with a
	// reserve of file descriptors (limits.go).
	sl := limitSocket(ln, p.log)
	srv := sl.Server(notingChanges(p.api, p.changed, p.h.Audit(), "socket"), p.errorLog(), localapi.ConnContext)
	// Servers start in the background; the API answers at once and shows
	// each server as "starting" until it is ready. The set is in place
	// before the API answers, so that its first status lists every server.
	if pc != nil {
		pc.start(ctx)
	}
	p.h.Start(context.WithoutCancel(ctx))
	g, gctx := errgroup.WithContext(ctx)
	for _, t := range tcp {
		g.Go(func() error { return served(t.ln.Addr().String(), t.srv.Serve(t.ln)) })
	}
	g.Go(func() error { return served("the socket", srv.Serve(sl)) })
	if pc != nil {
		g.Go(func() error { return served("the internal channel", pc.srv.Serve(pc.ln)) })
		g.Go(func() error { return pc.reg.Run(gctx) })
		pc.owners.OnChange(func(names []string) { p.h.Replace(gctx, names) })
		g.Go(func() error { return pc.owners.Run(gctx) })
		g.Go(func() error { return pc.db.FollowLeases(gctx, func(string) { pc.owners.Poke() }) })
	}
	// Changes other replicas make to a shared store (none for files). It
	// ends before the shutdown stops the servers: a change being applied
	// could otherwise start one after.
	followed := make(chan struct{})
	g.Go(func() error {
		defer close(followed)
		return p.h.Follow(gctx)
	})
	g.Go(func() error {
		settle(gctx, p.h, opts.SteadyProcs) // at once when no server is starting
		p.hl.settled.Store(true)
		resettle(gctx, p.h, p.fc.Activity(), p.fc.LastActive, p.changed)
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		<-followed
		p.shutdown(srv, tcp, pc)
		return nil
	})
	ready()
	return g.Wait()
}

// served is a server's end: nil when it was shut down, else its error.
func served(what string, err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("serving %s: %w", what, err)
}

// shutdown stops accepting API requests (in-flight ones get a grace
// period), then stops every server.
func (p *parts) shutdown(srv *http.Server, tcp tcpServers, pc *peerServer) {
	p.log.Info("daemon stopping")
	// Out of the balancer's rotation first (readiness), then, while
	// everything still serves, the others take its stdio servers over.
	p.hl.stopping.Store(true)
	if p.stopDelay > 0 {
		p.log.Info("daemon stopping: out of rotation, serving on", "stop_delay_ms", p.stopDelay.Milliseconds())
		time.Sleep(p.stopDelay)
	}
	if pc != nil {
		pc.drain(context.Background())
	}
	// The channel stops on a grace of its own, beside the API and the
	// face: it first waits for the other replicas to follow the
	// hand-over, which the face's slow requests must not use up.
	var channel sync.WaitGroup
	if pc != nil {
		channel.Go(pc.stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.h.EndSubscriptions() // event streams would otherwise hold Shutdown
	p.fc.Close()           // and so would the face's client sessions
	srv.Shutdown(ctx)
	for _, t := range tcp {
		t.srv.Shutdown(ctx)
	}
	channel.Wait()
	p.fc.Close() // what the channel's last calls opened anew
	p.h.Close()
	if pc != nil {
		// Only now that its servers are stopped may another replica
		// start those it still held (the hand-over timed out). Each
		// bounds itself (a second): ctx, the API's grace, may be used
		// up by now, and then both failed at once and left the rows.
		pc.owners.Release(context.Background())
		pc.reg.Leave(context.Background())
	}
	p.log.Info("daemon stopped")
}

// hostSource lets the metrics read the host, which is built after them.
type hostSource struct{ h **host.Host }

func (s hostSource) Servers() (int64, []apitype.ServerStatus) { return (*s.h).Servers() }

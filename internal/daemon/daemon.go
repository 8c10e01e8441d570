// Package daemon wires the Plexus daemon together: the home directory and its
// lock, the log file, the engine (host), and the settings API on the unix
// socket; and it owns the shutdown order.
//
// Shutdown order: stop accepting API requests (in-flight ones get a grace
// period), then stop every server (each process group ended and reaped),
// then remove the socket and release the lock.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/face"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/localapi"
	"github.com/plexus-mcp/plexus/internal/metrics"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/store"
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
	// (metrics); "" means DefaultListen, "off" none.
	Listen string
	// Version is reported to MCP clients of the face.
	Version string
	// SteadyProcs, if not 0, is how many threads run the daemon's Go code
	// once its servers have started (runtime.GOMAXPROCS; see settle).
	SteadyProcs int
}

// Run runs the daemon until ctx is done.
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

	logs, err := openLog(opts.Home)
	if err != nil {
		return err
	}
	defer logs.Close()
	handlers := []slog.Handler{slog.NewJSONHandler(logs, nil)}
	if opts.Stderr != nil {
		handlers = append(handlers, slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	log := slog.New(slog.NewMultiHandler(handlers...))

	st, err := store.Open(opts.Home)
	if err != nil {
		return err
	}
	// A pins file that does not load stops the daemon, like a settings file:
	// it would otherwise hold every server back.
	pn, err := pins.Open(opts.Home, st.Config().MCP.Servers)
	if err != nil {
		return err
	}

	sock := filepath.Join(opts.Home, SocketName)
	// We hold the lock, so a socket file left here belongs to a dead daemon.
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing stale socket: %w", err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", sock, err)
	}
	defer os.Remove(sock)
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("making the socket private: %w", err)
	}

	var h *host.Host
	mtr := metrics.New(hostSource{&h})
	h = host.New(host.Options{Store: st, Logger: log, Shim: opts.Shim, Observer: mtr, Pins: pn})
	// The MCP face, on the socket (for plexus mcp) and the loopback address.
	fc := face.New(h, log.With("component", "face"), opts.Version)
	fc.Observe(mtr.ObserveFace)

	api := localapi.New(h, log.With("component", "localapi"))
	var tcp *http.Server
	var serveTCP func()
	var httpAddr string
	if opts.Listen != "off" {
		addr := opts.Listen
		if addr == "" {
			addr = DefaultListen
		}
		token, err := loadToken(opts.Home)
		if err != nil {
			ln.Close()
			return err
		}
		tln, err := listenLoopback(addr)
		switch {
		case err != nil && opts.Listen == "" && errors.Is(err, syscall.EADDRINUSE):
			// The default address is taken (another daemon, another home):
			// run on the socket alone rather than not at all, and say so.
			log.Warn("loopback address in use: metrics are off", "addr", addr,
				"hint", "start with --listen 127.0.0.1:PORT to serve them elsewhere")
		case err != nil:
			ln.Close()
			return err
		}
		if tln != nil {
			lb := localapi.NewLoopback(token, log.With("component", "loopback"))
			lb.Handle("GET /metrics", mtr.Handler())
			lb.Handle(face.Path, fc)
			lb.Handle(face.Path+"/", fc)
			// Profiles of the running daemon, for `go tool pprof` with the
			// token (docs/performance.md).
			lb.Handle("/debug/pprof/", http.HandlerFunc(pprof.Index))
			lb.Handle("/debug/pprof/profile", http.HandlerFunc(pprof.Profile))
			httpAddr = tln.Addr().String()
			tcp = &http.Server{Handler: loopbackMux(lb, api, httpAddr, log), ReadHeaderTimeout: 10 * time.Second,
				ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
			serveTCP = func() { go tcp.Serve(tln) }
		}
	}

	api.HTTPAddr = httpAddr
	api.Mount(face.Path, fc)
	api.Mount(face.Path+"/", fc)
	srv := &http.Server{
		Handler:           api,
		ConnContext:       localapi.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Servers start in the background; the API answers at once and shows
	// each server as "starting" until it is ready. The set is in place
	// before the API answers, so that its first status lists every server.
	h.Start(context.WithoutCancel(ctx))
	if serveTCP != nil {
		serveTCP()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	go func() {
		settle(ctx, h, opts.SteadyProcs) // at once when no server is starting
		resettle(ctx, h, fc.Ended())
	}()
	log.Info("daemon ready", "home", opts.Home, "socket", sock, "http", httpAddr, "pid", os.Getpid(),
		"servers", len(st.Config().MCP.Servers), "startup_ms", time.Since(start).Milliseconds())

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-serveErr:
	}
	log.Info("daemon stopping")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.EndSubscriptions() // event streams would otherwise hold Shutdown
	fc.Close()           // and so would the face's client sessions
	srv.Shutdown(shutdownCtx)
	if tcp != nil {
		tcp.Shutdown(shutdownCtx)
	}
	h.Close()
	log.Info("daemon stopped")
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

// hostSource lets the metrics read the host, which is built after them.
type hostSource struct{ h **host.Host }

func (s hostSource) Servers() (int64, []apitype.ServerStatus) { return (*s.h).Servers() }

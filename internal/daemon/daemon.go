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
	"os"
	"path/filepath"
	"time"

	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/localapi"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/upstream"
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

	upstream.WarmLoginPATH()
	h := host.New(host.Options{Store: st, Logger: log, Shim: opts.Shim})
	srv := &http.Server{
		Handler:           localapi.New(h, log.With("component", "localapi")),
		ConnContext:       localapi.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	// Servers start in the background; the API answers at once and shows
	// each server as "starting" until it is ready.
	h.Start(context.WithoutCancel(ctx))
	log.Info("daemon ready", "home", opts.Home, "socket", sock, "pid", os.Getpid(),
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
	srv.Shutdown(shutdownCtx)
	h.Close()
	log.Info("daemon stopped")
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

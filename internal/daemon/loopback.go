package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/atomicfile"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/localapi"
	"github.com/plexus-mcp/plexus/internal/teamauth"
	"github.com/plexus-mcp/plexus/internal/webui"
)

// DefaultListen is the loopback address of the web page, the metrics and
// the MCP face.
const DefaultListen = "127.0.0.1:7780"

// TokenName is the file under the home that holds the loopback token.
const TokenName = "token"

// loadToken reads $PLEXUS_HOME/token, creating it (0600, 256 random bits)
// on first start.
func loadToken(home string) (string, error) {
	p := filepath.Join(home, TokenName)
	b, err := os.ReadFile(p)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) < 32 {
			return "", fmt.Errorf("%s is too short to be a token: delete it and restart the daemon to make a new one", p)
		}
		if err := os.Chmod(p, 0o600); err != nil {
			return "", err
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	if err := atomicfile.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("creating the token: %w", err)
	}
	return tok, nil
}

// listenLoopback listens on addr, which must be a loopback address: the
// daemon never serves anything beyond this machine.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--listen %q: only a loopback address (127.0.0.1, ::1, localhost) is allowed", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w (another daemon may use it: pass --listen 127.0.0.1:PORT, or --listen off)", addr, err)
	}
	return ln, nil
}

// loopbackMux splits the loopback address: the token-guarded endpoints
// (metrics, the MCP face) go to lb — the face through team, which guards it
// with the team's tokens instead in team mode — everything else to the web page, which
// has its own guard and session cookie. It also lets the settings API mint
// login links to the page (`plexus ui`).
func loopbackMux(lb *localapi.Loopback, team *teamSwitch, api *localapi.Handler, addr string, log *slog.Logger) http.Handler {
	web := webui.New(webui.Options{API: api.Trusted(), Log: log.With("component", "webui")})
	api.UILogin = func() (apitype.UILogin, error) {
		link, exp, err := web.LoginLink(addr)
		return apitype.UILogin{URL: link, ExpiresAt: exp}, err
	}
	mux := http.NewServeMux()
	for _, p := range []string{"/metrics", "/debug/pprof/"} {
		mux.Handle(p, lb)
	}
	// The face: behind the loopback token, or the team's tokens in team
	// mode (team.go).
	team.other = web
	mux.Handle("/mcp", team)
	mux.Handle("/mcp/", team)
	mux.HandleFunc(teamauth.MetadataPath, team.metadata)
	mux.HandleFunc(teamauth.MetadataPath+"/", team.metadata)
	mux.HandleFunc(config.TeamCallbackPath, team.callback)
	mux.Handle("/", web)
	return mux
}

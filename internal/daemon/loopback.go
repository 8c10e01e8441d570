package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/atomicfile"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/connlimit"
	"github.com/plexus-mcp/plexus/internal/localapi"
	"github.com/plexus-mcp/plexus/internal/webui"
)

// DefaultListen is the loopback address of the web page, the metrics and
// the MCP face.
const DefaultListen = "127.0.0.1:7780"

// TokenName is the file under the home that holds the daemon's token,
// which every request carries, on the socket as on the loopback address.
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

// loopbackMux splits the loopback address: the token-guarded endpoints
// (metrics, the MCP face) go to lb — the face through team, which guards it
// with the team's tokens instead in team mode — everything else to the web page, which
// has its own guard and session cookie. It also lets the settings API mint
// login links to the page (`plexus ui`).
func loopbackMux(lb *localapi.Loopback, team *teamSwitch, api *localapi.Handler, changed chan<- struct{}, alog *audit.Log, hl *health, addr string, log *slog.Logger) http.Handler {
	// What the page's guard admits to the API is proven (connlimit).
	web := webui.New(webui.Options{API: connlimit.Proven(notingChanges(api.Trusted(), changed, alog, "web")), Log: log.With("component", "webui")})
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
	team.handle(mux)
	hl.handle(mux)
	mux.Handle("/", web)
	return mux
}

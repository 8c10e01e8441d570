package teamauth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/config"
)

// MetadataPath is where the protected resource metadata is served
// (RFC 9728 §3); the face's own document is under it at /mcp.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Defaults of Options.
const (
	DefaultSkew       = 30 * time.Second
	DefaultMinRefresh = 10 * time.Second
)

// Options tune a Resource; the zero value is right for a daemon.
type Options struct {
	// Client fetches issuers' metadata and keys; nil: one with a 10 s
	// timeout.
	Client *http.Client
	// MinRefresh is the least time between two fetches of one issuer's
	// keys; 0 is DefaultMinRefresh.
	MinRefresh time.Duration
	// Skew is the clock difference allowed either way on exp, nbf and
	// iat; 0 is DefaultSkew.
	Skew time.Duration
	Now  func() time.Time
	Log  *slog.Logger
}

// Resource is the face as a protected resource of one team setting.
type Resource struct {
	team  config.Team
	rings map[string]*keyring // by issuer
	skew  time.Duration
	now   func() time.Time
	log   *slog.Logger
	meta  string // the metadata document's URL
	seen  tokenCache
}

// New returns the protected resource of t, which must be valid.
func New(t *config.Team, o Options) *Resource {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.MinRefresh == 0 {
		o.MinRefresh = DefaultMinRefresh
	}
	if o.Skew == 0 {
		o.Skew = DefaultSkew
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	r := &Resource{team: *t.Clone(), rings: map[string]*keyring{}, skew: o.Skew, now: o.Now, log: o.Log}
	for _, iss := range t.Issuers {
		r.rings[iss] = &keyring{issuer: iss, client: o.Client, minRefresh: o.MinRefresh, now: o.Now}
	}
	u, _ := url.Parse(t.Resource)
	r.meta = u.Scheme + "://" + u.Host + MetadataPath + strings.TrimSuffix(u.Path, "/")
	return r
}

// Team is the setting the resource was made from.
func (r *Resource) Team() config.Team { return r.team }

// MetadataURL is the URL of the resource's metadata document, which every
// challenge names.
func (r *Resource) MetadataURL() string { return r.meta }

// ServeMetadata serves the RFC 9728 document at MetadataPath and under it
// (the path-suffixed form clients try first for /mcp and /mcp/NAME).
func (r *Resource) ServeMetadata(w http.ResponseWriter, req *http.Request) {
	rest := strings.TrimPrefix(req.URL.Path, MetadataPath)
	if rest != "" && rest != "/mcp" && !strings.HasPrefix(rest, "/mcp/") {
		http.NotFound(w, req)
		return
	}
	// Public information, read by browser-based clients too (RFC 9728 §3).
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if req.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	doc := map[string]any{
		"resource":                 r.team.Resource,
		"authorization_servers":    r.team.Issuers,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Plexus",
	}
	if len(r.team.Scopes) > 0 {
		doc["scopes_supported"] = r.team.Scopes
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	json.NewEncoder(w).Encode(doc)
}

// Guard returns next behind the token check.
func (r *Resource) Guard(next http.Handler) http.Handler {
	// The SDK's streamable handler binds a session to the user of the
	// request that opened it (a session id alone does not make another
	// user that user) when the request carries its TokenInfo, which only
	// its own middleware can put there: it is handed the identity checked
	// here.
	sdk := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		ti, ok := ctx.Value(tokenInfoKey{}).(*auth.TokenInfo)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return ti, nil
	}, &auth.RequireBearerTokenOptions{ClockSkew: r.skew})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if o := req.Header.Get("Origin"); o != "" && !r.sameOrigin(o) {
			// MCP's streamable HTTP transport: servers MUST validate Origin.
			r.refuse(w, req, http.StatusForbidden, "", "cross-origin requests are refused")
			return
		}
		scheme, tok, found := strings.Cut(req.Header.Get("Authorization"), " ")
		if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			r.refuse(w, req, http.StatusUnauthorized, "", "an access token from the team's authorization server is required")
			return
		}
		v, err := r.checkOnce(req.Context(), strings.TrimSpace(tok))
		var ref *refusal
		if errors.As(err, &ref) {
			r.refuse(w, req, ref.Status, ref.Code, ref.Description)
			return
		} else if err != nil {
			r.refuse(w, req, http.StatusUnauthorized, "invalid_token", "the token could not be checked")
			return
		}
		if missing := r.missingScopes(v.scopes); len(missing) > 0 {
			r.refuse(w, req, http.StatusForbidden, "insufficient_scope", "the token lacks the scopes "+strings.Join(missing, " "))
			return
		}
		ti := &auth.TokenInfo{Scopes: v.scopes, Expiration: v.exp, UserID: v.id.Issuer + " " + v.id.User,
			Extra: map[string]any{caller.TokenInfoKey: v.id}}
		ctx := caller.With(req.Context(), v.id)
		ctx = context.WithValue(ctx, tokenInfoKey{}, ti)
		sdk.ServeHTTP(w, req.WithContext(ctx))
	})
}

type tokenInfoKey struct{}

// checkOnce is check, of a token not checked within the last minute.
func (r *Resource) checkOnce(ctx context.Context, raw string) (verified, error) {
	now := r.now()
	if v, ok := r.seen.get(raw, now); ok {
		return v, nil
	}
	v, err := r.check(ctx, raw)
	if err == nil {
		r.seen.put(raw, v, now, r.skew)
	}
	return v, err
}

func (r *Resource) missingScopes(have []string) []string {
	var missing []string
	for _, s := range r.team.Scopes {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// refuse answers a request the guard does not let through: 401 and 403
// carry the challenge of RFC 6750 §3 with the metadata's URL (RFC 9728
// §5.1), and an error code when the token itself was wrong.
func (r *Resource) refuse(w http.ResponseWriter, req *http.Request, status int, code, why string) {
	r.log.Warn("team request refused", "status", status, "error", code, "reason", why, "path", req.URL.Path)
	params := []string{}
	if code != "" {
		params = append(params, `error="`+code+`"`, `error_description="`+quotable(why)+`"`)
	}
	if len(r.team.Scopes) > 0 && (code == "" || code == "insufficient_scope") {
		params = append(params, `scope="`+strings.Join(r.team.Scopes, " ")+`"`)
	}
	params = append(params, `resource_metadata="`+r.meta+`"`)
	if status == http.StatusUnauthorized || code == "insufficient_scope" {
		w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"code": "unauthorized", "message": "refused: " + why}}
	if code != "" {
		body["error"].(map[string]any)["oauthError"] = code
	}
	json.NewEncoder(w).Encode(body)
}

// quotable makes text safe inside a quoted-string of a challenge.
func quotable(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '"' || c == '\\' || c < 0x20 || c > 0x7e {
			return '\''
		}
		return c
	}, s)
}

func (r *Resource) sameOrigin(origin string) bool {
	o, err := url.Parse(origin)
	if err != nil {
		return false
	}
	res, _ := url.Parse(r.team.Resource)
	return o.Scheme == res.Scheme && strings.EqualFold(o.Host, res.Host)
}

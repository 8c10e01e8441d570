package localapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/clientconf"
)

// The web page's import and connect: the daemon reads and writes the
// person's MCP client files itself, as `plexus import` and `plexus connect`
// do on the CLI's side. It runs as the same user, so it may; it writes only
// Plexus's own entry (its own program, never a command a request names),
// in the user's scope, by clientconf's rules (the change shown as a masked
// diff and written only as shown, a private backup kept, no write through
// a link leading out of the home, no write of the client's meanwhile
// lost). A team's daemon serves many people from a machine of its own: it
// touches no one's client files.

// defaultListen is the daemon's loopback address when none is given
// (daemon.DefaultListen, which localapi does not import).
const defaultListen = "127.0.0.1:7780"

// clientOptions is where the person's client files are and the entry that
// starts this daemon's Plexus, or why the daemon does not touch them.
func (a *Handler) clientOptions() (clientconf.Options, error) {
	if a.host.Store().Config().Team != nil {
		return clientconf.Options{}, errors.New("this daemon serves a team: it does not read or write people's client files; run `plexus connect` on your own machine")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return clientconf.Options{}, errors.New("the daemon cannot find your home folder: use `plexus connect` and `plexus import` in a terminal")
	}
	exe, err := a.executable()
	if err != nil {
		return clientconf.Options{}, errors.New("the daemon cannot find its own program: use `plexus connect` in a terminal")
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return clientconf.Options{}, errors.New("the daemon runs from a folder that goes away (go run): install plexus (`go install ./cmd/plexus`) and run that one")
	}
	var l clientconf.Launch
	if h := a.host.Store().Home(); filepath.Clean(h) != filepath.Join(home, ".plexus") {
		l.Home = h
	}
	switch a.HTTPAddr {
	case defaultListen:
	case "":
		l.Listen = "off"
	default:
		l.Listen = a.HTTPAddr
	}
	return clientconf.Options{Home: home, Scope: clientconf.ScopeUser, GOOS: runtimeGOOS, Getenv: os.Getenv, Command: exe, Launch: l}, nil
}

// listClients is GET /v1/clients.
func (a *Handler) listClients(w http.ResponseWriter, r *http.Request) {
	out := apitype.ClientList{Clients: []apitype.ClientFile{}}
	opts, err := a.clientOptions()
	if err != nil {
		out.Reason = err.Error()
		writeJSON(w, http.StatusOK, out)
		return
	}
	out.Available = true
	for _, name := range clientconf.Clients() {
		cf := apitype.ClientFile{Client: name, Title: clientconf.Title(name), Servers: []string{}}
		if p, err := clientconf.Path(name, opts); err == nil {
			cf.Path = p
		}
		plan, err := clientconf.Prepare(name, opts, true)
		if err != nil {
			cf.Error = err.Error()
			out.Clients = append(out.Clients, cf)
			continue
		}
		cf.Path, cf.Exists, cf.Connected = plan.Path, plan.Exists, plan.Exists && !plan.Changed
		if plan.Exists {
			if s, err := clientconf.Servers(name, plan.Before); err == nil && s != nil {
				cf.Servers = s
			}
		}
		out.Clients = append(out.Clients, cf)
	}
	writeJSON(w, http.StatusOK, out)
}

// clientRequest decodes the request into req, reads the client's file and
// works out the connect, or renders why it cannot.
func (a *Handler) clientRequest(w http.ResponseWriter, r *http.Request, req any) (*clientconf.Plan, clientconf.Options, bool) {
	if !decodeBody(w, r, maxSettingsBody, req) {
		return nil, clientconf.Options{}, false
	}
	client := r.PathValue("client")
	opts, err := a.clientOptions()
	if err != nil {
		writeError(w, http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error()})
		return nil, opts, false
	}
	plan, err := clientconf.Prepare(client, opts, true)
	var unknown *clientconf.UnknownClientError
	switch {
	case errors.As(err, &unknown):
		writeError(w, http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound, Message: err.Error()})
		return nil, opts, false
	case err != nil:
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error(),
			Hint: "fix the file in its client (or by hand), then try again"})
		return nil, opts, false
	}
	return plan, opts, true
}

// importClient is POST /v1/clients/{client}/import: the import of the
// client's file, read by the daemon.
func (a *Handler) importClient(w http.ResponseWriter, r *http.Request) {
	var req apitype.ClientImportRequest
	plan, _, ok := a.clientRequest(w, r, &req)
	if !ok {
		return
	}
	if !plan.Exists {
		writeError(w, http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound,
			Message: plan.Title + " has no settings file at " + plan.Path + ": there is nothing to import"})
		return
	}
	a.importContent(w, r, apitype.ImportRequest{Dialect: plan.Client, Source: plan.Path, Content: string(plan.Before),
		DryRun: req.DryRun, Sandbox: req.Sandbox})
}

// contentHash names a file's content, so that a write is of the content
// a person saw.
func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// connectClient is POST /v1/clients/{client}/connect.
func (a *Handler) connectClient(w http.ResponseWriter, r *http.Request) {
	var req apitype.ClientConnectRequest
	plan, opts, ok := a.clientRequest(w, r, &req)
	if !ok {
		return
	}
	face := a.host.Settings().Face
	out := apitype.ClientConnectResult{Client: plan.Client, Title: plan.Title, Path: plan.Path, Changed: plan.Changed,
		Diff: clientconf.MaskDiff(plan.Diff(), opts.Command, opts.Launch.Home, opts.Launch.Listen, "--listen"), Base: contentHash(plan.Before),
		AllowExternalCall: face != nil && face.AllowExternalCall}
	if req.DryRun || !plan.Changed {
		writeJSON(w, http.StatusOK, out)
		return
	}
	if req.Base != out.Base {
		writeError(w, http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict,
			Message: plan.Path + " changed since its change was shown: nothing was written",
			Hint:    "look at the change again, then connect"})
		return
	}
	backup, err := plan.Write(time.Now())
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	a.log.Info("client connected", "client", plan.Client, "path", plan.Path)
	out.Written, out.Backup = true, backup
	writeJSON(w, http.StatusOK, out)
}

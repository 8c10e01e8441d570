package localapi

import (
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/exporter"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/importer"
)

// maxImportBody bounds an import request. Claude Code's ~/.claude.json
// keeps every project's history beside its servers and grows to
// megabytes; the CLI sends files up to 16 MiB, which JSON escaping can
// make a few times larger.
const maxImportBody = 64 << 20

// importServers is POST /v1/import: parse another client's file, then add
// its servers and move its literal secrets to the managed store, or, for a
// dry run, say what that would do. Servers whose name is taken by a
// different server are reported as conflicts and left alone, and so are
// their secrets.
func (a *Handler) importServers(w http.ResponseWriter, r *http.Request) {
	var req apitype.ImportRequest
	if !decodeBody(w, r, maxImportBody, &req) {
		return
	}
	a.importContent(w, r, req)
}

// importContent imports req's file content (POST /v1/import, and the web
// page's import of a client's file the daemon read).
func (a *Handler) importContent(w http.ResponseWriter, r *http.Request, req apitype.ImportRequest) {
	content := []byte(req.Content)
	dialect := req.Dialect
	if dialect == "" {
		d, err := importer.Detect(req.Source, content)
		if err != nil {
			writeImportError(w, err)
			return
		}
		dialect = d
	}
	st := a.host.Store()
	// The values are not looked at: only whether a variable is set, to
	// report the ones still missing.
	isSet := func(name string) (string, bool) {
		if _, ok := st.LookupSecret(name); ok {
			return "", true
		}
		_, ok := os.LookupEnv(name)
		return "", ok
	}
	// A relative cwd resolves against the file's folder, when the client
	// says where the file is.
	dir := ""
	if filepath.IsAbs(req.Source) {
		dir = filepath.Dir(req.Source)
	}
	res, err := importer.ParseIn(dialect, content, dir, isSet)
	if err != nil {
		writeImportError(w, err)
		return
	}
	if req.Sandbox {
		sandboxAll(res.Servers)
	}
	// First the servers alone, to learn the conflicts: a server that is
	// not added must not leave its secrets behind, nor stop the import
	// because one of them clashes.
	plan, err := a.host.Import(r.Context(), host.ImportRequest{Servers: res.Servers, DryRun: true})
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	servers, secrets := withoutConflicts(res, plan.Conflicts)
	if clash := secretClash(a.host, secrets); clash != "" {
		writeError(w, http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict,
			Message: "the managed secret " + clash + " already holds a different value; nothing was imported, so that nothing is overwritten",
			Hint:    "to take the file's value, remove the old one with `plexus secret rm " + clash + "` and import again; to keep it, import a copy of the file without the value"})
		return
	}
	done, err := a.host.Import(r.Context(), host.ImportRequest{Servers: servers, Secrets: secrets, DryRun: req.DryRun})
	if err != nil {
		a.renderError(w, r, err)
		return
	}
	// A server that took one of the names meanwhile is a conflict too.
	done.Conflicts = sortedUnique(append(done.Conflicts, plan.Conflicts...))
	setRevision(w, done.Revision)
	writeJSON(w, http.StatusOK, importAnswer(res, done, req.DryRun))
}

// secretClash returns the first managed secret the import would change.
// host.Import refuses it too; checking here gives the caller a conflict
// with a remedy instead of an internal error.
func secretClash(h *host.Host, secrets map[string]string) string {
	cur := h.Store().Creds()
	var names []string
	for name, v := range secrets {
		if old, ok := cur.Env[name]; ok && old != v {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[0]
}

// withoutConflicts drops the conflicting servers and the secrets only they
// would have used.
func withoutConflicts(res *importer.Result, conflicts []string) (map[string]config.Server, map[string]string) {
	servers := maps.Clone(res.Servers)
	for _, name := range conflicts {
		delete(servers, name)
	}
	keep := map[string]bool{}
	for _, e := range res.Entries {
		if _, ok := servers[e.Name]; ok && e.Name != "" {
			for _, s := range e.Secrets {
				keep[s] = true
			}
		}
	}
	secrets := map[string]string{}
	for k, v := range res.Secrets {
		if keep[k] {
			secrets[k] = v
		}
	}
	return servers, secrets
}

func importAnswer(res *importer.Result, done host.ImportResult, dryRun bool) apitype.ImportResult {
	out := apitype.ImportResult{
		Dialect:     res.Dialect,
		DryRun:      dryRun,
		Revision:    done.Revision,
		Entries:     []apitype.ImportEntry{},
		Notes:       res.Notes,
		Added:       sorted(done.Added),
		Unchanged:   sorted(done.Unchanged),
		Conflicts:   sorted(done.Conflicts),
		SecretsSet:  sorted(done.SecretsSet),
		SecretsKept: sorted(done.SecretsKept),
		Missing:     []string{},
	}
	result := map[string]string{}
	for _, n := range done.Added {
		result[n] = apitype.ImportAdded
	}
	for _, n := range done.Unchanged {
		result[n] = apitype.ImportUnchanged
	}
	for _, n := range done.Conflicts {
		result[n] = apitype.ImportConflict
	}
	missing := map[string]bool{}
	for _, e := range res.Entries {
		ae := apitype.ImportEntry{
			Source: e.Source, Original: e.Original, Name: e.Name, Action: string(e.Action),
			Reason: e.Reason, Result: result[e.Name], Notes: e.Notes, Secrets: e.Secrets, Missing: e.Missing,
		}
		if ae.Result == apitype.ImportConflict {
			// Nothing of it was taken: its secrets and needs do not count.
			ae.Secrets, ae.Missing = nil, nil
		}
		for _, m := range ae.Missing {
			missing[m] = true
		}
		out.Entries = append(out.Entries, ae)
	}
	out.Missing = sorted(slices.Collect(maps.Keys(missing)))
	return out
}

func sortedUnique(s []string) []string {
	return slices.Compact(sorted(s))
}

func sorted(s []string) []string {
	if s == nil {
		return []string{}
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// writeImportError renders a file the importer cannot read: a bad request,
// with the key path as the problem's path. The message quotes no value.
func writeImportError(w http.ResponseWriter, err error) {
	var ie *importer.Error
	body := apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: "cannot import the file: " + err.Error()}
	if errors.As(err, &ie) {
		body.Hint = "check the file, or name its format with --dialect (" + strings.Join(importer.Dialects(), ", ") + ")"
	}
	writeError(w, http.StatusBadRequest, body)
}

// export is GET /v1/export?client=NAME[&command=PATH]: the snippet that
// registers `plexus mcp` in that client.
func (a *Handler) export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s, err := exporter.Export(q.Get("client"), exporter.Options{Command: q.Get("command"), GOOS: runtimeGOOS})
	if err != nil {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, apitype.ExportResult{
		Client: s.Client, Path: s.Path, Format: s.Format, Text: s.Text, Command: s.Command, Notes: s.Notes,
	})
}

// runtimeGOOS is the system whose client files the daemon reads and writes.
const runtimeGOOS = runtime.GOOS

// sandboxAll gives every stdio server without a sandbox the strict one.
func sandboxAll(servers map[string]config.Server) {
	for name, sc := range servers {
		if sc.Type == config.TypeStdio && sc.Sandbox == nil {
			sc.Sandbox = config.StrictSandbox()
			servers[name] = sc
		}
	}
}

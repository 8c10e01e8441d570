package localapi

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// renderError turns an error from the host into the API's one error shape,
// with the status code and a hint of what to do next.
func (a *Handler) renderError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := classify(err)
	if status >= 500 {
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, status, body)
}

func classify(err error) (int, apitype.ErrorBody) {
	var (
		cfgErr   *config.Error
		missing  *config.MissingVarError
		conflict *store.ConflictError
		notFound *host.NotFoundError
		exists   *host.ExistsError
		startErr *host.StartError
		approval *host.ApprovalError
		notHeld  *pins.NotHeldError
		changed  *pins.ChangedError
		login    *host.LoginError
		handEdit *store.HandEditError
		away     *docstore.UnreachableError
		placing  *host.PlacementError
	)
	switch {
	case errors.As(err, &away) && away.Unknown:
		return http.StatusServiceUnavailable, apitype.ErrorBody{Code: apitype.CodeUnavailable, Message: err.Error(),
			Hint: "read the settings again (`plexus settings`, `plexus ls`) once the database answers, to see whether the change was made"}
	case errors.As(err, &away), errors.Is(err, docstore.ErrUnreachable):
		msg := err.Error()
		if away == nil {
			msg = "the store is unreachable, nothing was changed (" + msg + ")"
		}
		return http.StatusServiceUnavailable, apitype.ErrorBody{Code: apitype.CodeUnavailable, Message: msg,
			Hint: "the database the replicas share does not answer: try again once it does; running servers and sessions are served meanwhile"}
	case errors.As(err, &placing):
		return http.StatusServiceUnavailable, apitype.ErrorBody{Code: apitype.CodeUnavailable, Message: err.Error() + "; nothing was saved",
			Hint: "the replicas are settling which one runs this server (one is stopping, or the shared database is slow): run the command again in a few seconds"}
	case errors.As(err, &handEdit):
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(),
			Hint: "apply your edit with `plexus reload`, or discard it with `plexus reload --discard` (the edited file is kept: `plexus revisions`); then run the command again"}
	case errors.As(err, &login):
		return http.StatusBadGateway, apitype.ErrorBody{Code: apitype.CodeUpstream, Message: err.Error(),
			Hint: "check the server's URL and OAuth settings (`plexus edit " + login.Server + "`), then run `plexus login " + login.Server + "` again"}
	case errors.As(err, &approval):
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(),
			Hint: "review its command or URL and approve it with `plexus approve " + approval.Server + "`"}
	case errors.As(err, &notHeld) && notHeld.Pending:
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(),
			Hint: "review it and approve it first with `plexus approve " + notHeld.Server + "`"}
	case errors.As(err, &notHeld):
		return http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound, Message: err.Error(),
			Hint: "`plexus status` lists the held tools of each server"}
	case errors.As(err, &changed):
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(),
			Hint: "review the change again and repeat the command"}
	case errors.As(err, &cfgErr):
		body := apitype.ErrorBody{Code: apitype.CodeBadRequest, Message: "the settings are not valid; nothing was saved"}
		for _, p := range cfgErr.Problems {
			body.Problems = append(body.Problems, apitype.Problem{Path: p.Path, Message: p.Message})
		}
		return http.StatusBadRequest, body
	case errors.As(err, &missing):
		return http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: err.Error() + "; nothing was saved",
			Hint:    "set it with `plexus secret set " + missing.Name + "` (or in the daemon's environment), then try again"}
	case errors.As(err, &conflict):
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeStale, Message: err.Error(),
			Hint: "the settings changed meanwhile: read them again and redo the edit", Revision: conflict.Current}
	case errors.As(err, &notFound):
		hint := "see `plexus ls`"
		switch notFound.What {
		case "tool":
			hint = "see `plexus tools`"
		case "secret":
			hint = "see `plexus secret ls`"
		case "session":
			hint = "the session ended (or the daemon restarted): create a new one"
		case "revision":
			hint = "`plexus revisions` lists the kept versions of the settings"
		}
		return http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound, Message: err.Error(), Hint: hint}
	case errors.As(err, &exists):
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(),
			Hint: "change it with `plexus edit " + exists.Name + "`, or remove it first with `plexus rm " + exists.Name + "`"}
	case errors.As(err, &startErr) && startErr.Restart:
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(),
			Hint: "`plexus logs " + startErr.Server + "` shows what it wrote; fix that, then restart it again"}
	case errors.As(err, &startErr):
		hint := startErr.SandboxHint()
		if hint == "" {
			hint = "fix the command, URL or credentials; or save it anyway with --no-verify"
		}
		return http.StatusConflict, apitype.ErrorBody{Code: apitype.CodeConflict, Message: err.Error(), Hint: hint}
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return http.StatusInsufficientStorage, noSpace(err)
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, apitype.ErrorBody{Code: apitype.CodeTimeout, Message: err.Error()}
	}
	return http.StatusInternalServerError, apitype.ErrorBody{Code: apitype.CodeInternal, Message: err.Error()}
}

// noSpace says that the disk is full and which directory could not be
// written: a full disk is the user's to fix, not a bug.
func noSpace(err error) apitype.ErrorBody {
	where := "the disk holding $PLEXUS_HOME"
	var pe *fs.PathError
	if errors.As(err, &pe) {
		where = "the disk holding " + filepath.Dir(pe.Path)
	}
	return apitype.ErrorBody{Code: apitype.CodeNoSpace,
		Message: where + " is full; nothing was saved (" + err.Error() + ")",
		Hint:    "free space on " + strings.TrimPrefix(where, "the disk holding ") + "'s disk (`df -h` shows it), then run the command again"}
}

// renderUpstreamError renders a failed resource read or prompt get: an
// unavailable server is 503, anything the server said is 502.
func (a *Handler) renderUpstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var notFound *host.NotFoundError
	switch {
	case errors.As(err, &notFound):
		a.renderError(w, r, err)
	case errors.Is(err, supervisor.ErrUnavailable), errors.Is(err, upstream.ErrNotConnected):
		writeError(w, http.StatusServiceUnavailable, apitype.ErrorBody{Code: apitype.CodeUnavailable, Message: err.Error(),
			Hint: "see `plexus status` for why the server is not ready"})
	case errors.Is(err, context.DeadlineExceeded):
		a.renderError(w, r, err)
	default:
		writeError(w, http.StatusBadGateway, apitype.ErrorBody{Code: apitype.CodeUpstream, Message: err.Error()})
	}
}

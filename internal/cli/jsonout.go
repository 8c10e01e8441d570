package cli

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// Every command takes --json: the result as stable JSON on stdout, and an
// error as {"error": {code, message, hint, problems}} on stderr, with the
// same exit code as in text. Commands with JSON of their own declare the
// flag themselves (it shadows the inherited one); the others print the
// daemon's answer, or {"ok": true, …}.

// Error codes of the CLI's own errors, beside the daemon's (apitype.Code*).
const (
	codeUsage       = "usage"
	codeNoDaemon    = "daemon_not_running"
	codeInterrupted = "interrupted"
	codeFailed      = "failed"
)

// jsonFlagUsage is the help line of the flag every command inherits.
const jsonFlagUsage = "print the result, and any error, as JSON"

// wantsJSON reports whether cmd was asked for JSON, by its own --json or
// the inherited one.
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// argsWantJSON is wantsJSON for a command line cobra could not parse: any
// --json before a --.
func argsWantJSON(args []string) bool {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	return slices.Contains(args, "--json") || slices.Contains(args, "--json=true")
}

// okResult is the JSON of a command whose answer is only that it worked.
type okResult struct {
	OK       bool   `json:"ok"`
	Server   string `json:"server,omitempty"`
	Secret   string `json:"secret,omitempty"`
	Revision int64  `json:"revision,omitempty"`
}

// done prints the result of a command that has no JSON of its own: v as
// JSON when asked for, else the line for people.
func (a *app) done(cmd *cobra.Command, v any, human func()) error {
	if wantsJSON(cmd) {
		return printJSON(a.stdout(), v)
	}
	human()
	return nil
}

// errorJSON is the error as the JSON an error is printed as.
func (a *app) errorJSON(err error, usage bool) apitype.ErrorBody {
	msg := a.explain(err)
	body := apitype.ErrorBody{Code: codeFailed, Message: err.Error()}
	var ae *client.APIError
	switch {
	case usage:
		body.Code = codeUsage
		body.Hint = "see the command's --help"
	case errors.Is(err, context.Canceled):
		body.Code, body.Message = codeInterrupted, msg
	case errors.Is(err, client.ErrDaemonNotRunning):
		body.Code, body.Message = codeNoDaemon, msg
	case errors.As(err, &ae):
		body = ae.Body
		body.Message = err.Error()
		body.Hint = remedyFor(err)
	default:
		// A local error carries its remedy in its message.
		body.Message = msg
	}
	// The problems travel on their own; the message keeps its first part.
	if len(body.Problems) > 0 {
		body.Message, _, _ = strings.Cut(body.Message, "\n")
	}
	return body
}

// reportJSON prints err as {"error": …} on stderr.
func (a *app) reportJSON(err error, usage bool) {
	_ = printJSON(a.stderr(), struct {
		Error apitype.ErrorBody `json:"error"`
	}{a.errorJSON(err, usage)})
}

// summarySuffix is " (summary)" of a server's state, or "" without one.
func summarySuffix(s *apitype.ServerStatus) string {
	if s == nil {
		return ""
	}
	return " (" + summary(s) + ")"
}

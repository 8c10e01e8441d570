package cli

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// remedyError carries what a command knows to advise for one error code,
// since "not found" means "see plexus ls" for a server but "see plexus
// tools" for a tool.
type remedyError struct {
	err    error
	code   string
	remedy string
	// overrides puts this remedy before the daemon's hint: the command
	// knows better (a start that timed out needs its timeout raised).
	overrides bool
}

func (e *remedyError) Error() string { return e.err.Error() }
func (e *remedyError) Unwrap() error { return e.err }

// withRemedy attaches remedy to err for when the daemon answers with code
// and gives no hint of its own.
func withRemedy(err error, code, remedy string) error {
	if err == nil {
		return nil
	}
	return &remedyError{err: err, code: code, remedy: remedy}
}

// serverNotFound is the remedy of a command that names a server.
func serverNotFound(err error) error {
	return withRemedy(err, apitype.CodeNotFound, "see `plexus ls` for the configured servers")
}

// explain returns the message for err followed by what to do next
// (STYLE rule 8: the CLI turns the API's error into a remedy).
func (a *app) explain(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	if errors.Is(err, client.ErrDaemonNotRunning) {
		// What the command was doing adds nothing: nothing was done.
		for next := errors.Unwrap(err); next != nil && errors.Is(next, client.ErrDaemonNotRunning); next = errors.Unwrap(err) {
			err = next
		}
		return err.Error()
	}
	msg := err.Error()
	remedy := remedyFor(err)
	if near := a.nearServer(err); near != "" {
		remedy = "did you mean `" + near + "`? " + remedy
	}
	if remedy == "" || strings.Contains(msg, remedy) {
		return msg
	}
	if strings.Contains(msg, "\n") {
		return msg + "\n" + remedy
	}
	return msg + ": " + remedy
}

// noServer is the daemon's message for a server name it does not know.
var noServer = regexp.MustCompile(`no server named "([^"]+)"`)

// nearServer is the configured server whose name is nearest the one err
// says is unknown (a typo: two edits at most, or the name's case or a
// prefix), or "".
func (a *app) nearServer(err error) string {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Body.Code != apitype.CodeNotFound {
		return ""
	}
	m := noServer.FindStringSubmatch(err.Error())
	if m == nil || a.cl == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	list, lerr := a.cl.Servers(ctx)
	if lerr != nil {
		return ""
	}
	names := make([]string, len(list.Servers))
	for i, s := range list.Servers {
		names[i] = s.Name
	}
	return nearest(m[1], names)
}

// nearest is the name closest to typed: the same but for case, one that
// typed is a prefix of, or one within two edits; "" if none is.
func nearest(typed string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(strings.ToLower(typed), strings.ToLower(n))
		if len(typed) >= 2 && strings.HasPrefix(n, typed) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// remedyFor picks the advice for err: the daemon's hint first, then the
// command's, then a default for the error's code.
func remedyFor(err error) string {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		// Dial failures and local errors carry their remedy in the message.
		return ""
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if re, ok := e.(*remedyError); ok && re.overrides {
			return re.remedy
		}
	}
	if ae.Body.Hint != "" {
		return ae.Body.Hint
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if re, ok := e.(*remedyError); ok && re.code == ae.Body.Code {
			return re.remedy
		}
	}
	switch ae.Body.Code {
	case apitype.CodeBadRequest:
		if len(ae.Body.Problems) > 0 {
			return "correct the settings named above and run the command again"
		}
	case apitype.CodeUnauthorized:
		return "the daemon refused this user: run plexus as the user that runs the daemon"
	case apitype.CodeNotFound:
		return "see `plexus ls` for the configured servers"
	case apitype.CodeUnavailable:
		return "the server is not ready: see `plexus ls` for its state and last error"
	case apitype.CodeTimeout:
		return "the server took too long: raise its limit with `plexus edit SERVER --call-timeout MS`"
	case apitype.CodeUpstream:
		return "the server failed: see `plexus status` for its last error"
	case apitype.CodeTooLarge:
		return "send less: the daemon refuses requests this large"
	case apitype.CodeInternal:
		return "this is a bug in the daemon: look in $PLEXUS_HOME/logs.jsonl and report it"
	}
	return ""
}

// Package statewords names a server's state for people, in the one
// vocabulary that the CLI, the terminal UI, the web page (app.js keeps the
// same rules, and a test holds it to these words) and the README's state
// table share. The daemon's states (apitype.State*) say what the
// supervisor does; these words add what a person needs to know: that a
// login is wanted, that the server refused its credentials, that restarts
// have been given up on for a while, that an approval is waited for.
package statewords

import "github.com/plexus-mcp/plexus/internal/apitype"

// The words.
const (
	Ready         = "ready"
	Starting      = "starting"
	NeedsLogin    = "needs login"
	Unauthorized  = "unauthorized"
	Backoff       = "backoff"
	CrashLooping  = "crash-looping"
	Disabled      = "disabled"
	Failed        = "failed"
	NeedsApproval = "needs approval"
	Stopped       = "stopped"
	// Idle: a server started on demand that is not running — stopped
	// after its idle time, or not yet used — with its tools listed.
	Idle = "stopped (idle)"
	// Waking: a server being started by its first use, which waits.
	Waking = "starting on demand"
	// Installing: a start (at the daemon's start, on demand, or by a
	// restart) that waits for npm to install the server's package.
	Installing = "installing"
)

// All lists the words, in the order the README's table explains them.
var All = []string{Ready, Starting, Waking, Installing, Idle, NeedsLogin, Unauthorized, Backoff, CrashLooping, Disabled, Failed, NeedsApproval, Stopped}

// Where is what follows the word of a team's stdio server that another
// replica runs: " on replica ID"; "" for any other server.
func Where(s apitype.ServerStatus) string {
	if s.RunsOn == "" {
		return ""
	}
	return " on replica " + s.RunsOn
}

// Of is the word for a server's state.
func Of(s apitype.ServerStatus) string {
	switch {
	case s.State == apitype.StateDisabled || s.State == "" && !s.Enabled:
		return Disabled
	case s.NeedsApproval:
		return NeedsApproval
	case s.Installing && (s.State == apitype.StateStarting || s.State == apitype.StateWaking):
		return Installing
	case s.State == apitype.StateIdle:
		return Idle
	case s.State == apitype.StateWaking:
		return Waking
	case s.State == apitype.StateNeedsLogin,
		s.Auth != nil && s.Auth.NeedsLogin && s.State != apitype.StateReady:
		return NeedsLogin
	case s.CrashLooping:
		return CrashLooping
	case s.State == apitype.StateFailed && (s.HTTPStatus == 401 || s.HTTPStatus == 403):
		return Unauthorized
	case s.State == "":
		return "unknown"
	}
	return s.State
}

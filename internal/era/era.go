// Package era is the one place that knows what each MCP protocol era needs,
// for both sides of Plexus: the face (Plexus as a server, to clients) and
// upstream (Plexus as a client, to servers). Everything else asks it
// instead of comparing version strings.
//
// MCP has two eras. The session era (2024-11-05, 2025-03-26, 2025-06-18,
// 2025-11-25) opens a session with initialize: the session carries the
// client's capabilities and log level, a server asks its client mid-call
// with requests of its own (elicitation, sampling, roots), a request is
// cancelled with notifications/cancelled, ping keeps it alive, and over
// streamable HTTP its event streams may be resumed (from 2025-11-25 with
// a priming event). The stateless era (2026-07-28 on) has no session:
// each request carries the protocol version, client info, capabilities
// and log level in its _meta (and, over HTTP, the method and name in
// headers), a server asks for input in its result (input_required) and
// reads the answers from the client's retry, a request over HTTP is
// cancelled by closing it (over stdio still by notifications/cancelled),
// server/discover replaces initialize and ping, and nothing is resumed.
//
// A proxy between a client of one era and a server of the other
// translates: translate.go holds what each direction needs.
package era

// Versions Plexus speaks, by name.
const (
	// Stateless is the first version of the stateless era.
	Stateless = "2026-07-28"
	// Latest is the newest session-era version.
	Latest = "2025-11-25"
	// V20250618 is the first version that forbids batches.
	V20250618 = "2025-06-18"
	// V20250326 is the first version with streamable HTTP.
	V20250326 = "2025-03-26"
)

// IsStateless reports whether version is of the stateless era. An empty
// version (not known yet) is not.
func IsStateless(version string) bool { return version >= Stateless }

// IsSession reports whether version is a known-looking version of the
// session era.
func IsSession(version string) bool { return version != "" && version < Stateless }

// Primes reports whether a streamable HTTP server of version starts an
// event stream with a priming event (an id and no data), which the client
// may resume from (2025-11-25, SEP-1699).
func Primes(version string) bool { return version >= Latest && version < Stateless }

// Resumable reports whether the event streams of version carry ids that a
// client may resume with Last-Event-ID: every session-era version.
func Resumable(version string) bool { return !IsStateless(version) }

// Batches reports whether version lets a client send JSON-RPC batches
// (removed in 2025-06-18).
func Batches(version string) bool { return version < V20250618 }

// CancelsByClosing reports whether a request of version over streamable
// HTTP is cancelled by closing its response stream, with no
// notifications/cancelled ("Closing the SSE response stream is the
// cancellation signal"); over stdio every era sends the notification.
func CancelsByClosing(version string, http bool) bool { return http && IsStateless(version) }

// AsksInResult reports whether a server of version asks its client for
// input in a result (input_required) rather than with requests mid-call.
func AsksInResult(version string) bool { return IsStateless(version) }

package upstream

import (
	"net/http"
	"time"
)

// idleConnTimeout is how long a connection to a remote server waits idle
// for Plexus's next request. A server closes a connection that has been
// idle for its own keep-alive time — Node's http server, behind most MCP
// servers, after 5 s — and a request written as it closes fails after it
// was sent: a POST, which Go's transport does not send again and Plexus
// may not either (its outcome is unknown; CI saw a call to a Node server
// fail so after 5 s of quiet). Closing the connection first, a second
// before Node would, leaves that race to servers that keep one idle less
// than 4 s; a request after a longer pause opens a new connection.
const idleConnTimeout = 4 * time.Second

// NewTransport is the HTTP transport of a remote server: Go's default,
// with idle connections closed after idleConnTimeout.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.IdleConnTimeout = idleConnTimeout
	return t
}

package daemon

import (
	"net/http"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// notingChanges serves h and, after each request of the API that can
// change something (a method other than GET, HEAD or OPTIONS), puts a
// value in changed, so that the daemon settles again a second later
// (resettle): a settings change maps the code of the API, the settings
// store and the validation, and nothing else would shed it. Calls through
// the API (a tool, a resource, a prompt) change nothing and are left out:
// a client calling in a loop would otherwise have the daemon shed the
// code it is running every second.
func notingChanges(h http.Handler, changed chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if !changes(r) {
			return
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	})
}

// changes reports whether r is a request of the API that may change the
// daemon's settings or servers.
func changes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	path, ok := strings.CutPrefix(r.URL.Path, apitype.APIVersion+"/")
	if !ok {
		return false // the face, mounted beside the API, or nothing
	}
	switch path {
	case "call", "resources/read", "prompts/get":
		return false
	}
	return true
}

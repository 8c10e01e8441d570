package localapi

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// suggestName suggests a server's name from its URL or its command line,
// by the same rules as the terminal UI's form (serverconf), so that the
// web page has no rules of its own. A command line that does not split
// (an open quote) suggests nothing yet: the person is still typing.
func (a *Handler) suggestName(w http.ResponseWriter, r *http.Request) {
	var req apitype.SuggestNameRequest
	if !decodeBody(w, r, maxSettingsBody, &req) {
		return
	}
	var name string
	switch {
	case req.URL != "":
		name = serverconf.NameFromURL(req.URL)
	case req.Command != "":
		if argv, err := cmdline.Split(req.Command); err == nil {
			name = serverconf.NameFromArgv(argv)
		}
	}
	writeJSON(w, http.StatusOK, apitype.SuggestedName{Name: name})
}

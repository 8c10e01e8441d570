package cli

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportsOnlyFrontEndLayers holds the architecture: a front end reaches
// the daemon through client and apitype only (R-OWN-2), so the CLI cannot
// grow a second writer of the settings or reach into the engine. The CLI
// runs the terminal UI, so this holds the TUI's imports too.
func TestImportsOnlyFrontEndLayers(t *testing.T) {
	allowed := map[string]bool{
		"internal/cli":        true,
		"internal/client":     true,
		"internal/apitype":    true,
		"internal/cmdline":    true,
		"internal/serverconf": true,
		"internal/tui":        true,
		// the stdio-to-HTTP bridge of plexus mcp
		"internal/mcpbridge": true,
		"internal/sse":       true, // the event-stream reader of client and mcpbridge
		// leaf helpers of mcpbridge's hot path, which import nothing of ours
		"internal/jsonscan": true,
		"internal/rawhttp":  true,
		"internal/rawio":    true, // raw reads and writes of the bridge's pipes and connections
		"internal/era":      true, // what each protocol era needs; imports only jsonscan
		// plexus connect edits another client's own file, with the
		// user's rights, never Plexus's settings
		"internal/clientconf": true,
		"internal/atomicfile": true,
		// plexus service writes the user's login-service file (a systemd
		// unit, a launchd agent) with the user's rights, never Plexus's
		// settings
		"internal/service": true,
		// the words of a server's state, shared with the TUI
		"internal/statewords": true,
		// the binary's own version (plexus version), a leaf
		"internal/buildinfo": true,
		// plexus mcp gives back its start's pages when quiet, a leaf
		"internal/execpages": true,
	}
	for _, pkg := range testenv.OwnDeps(t) {
		if !allowed[pkg] {
			t.Errorf("cli depends on %s: a front end may import only client, apitype, cmdline, serverconf, tui, mcpbridge, sse, jsonscan, rawhttp, rawio, era, clientconf, service, atomicfile, statewords, buildinfo and execpages", pkg)
		}
	}
}

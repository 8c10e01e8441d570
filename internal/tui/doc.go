// Package tui is `plexus tui`: the terminal UI of the /mcp screen (R-UI-2,
// R-UI-4). It lists every server with its state, follows the
// daemon's event stream so that a crash, a restart or a login needed shows
// without a keypress, and changes servers through one form.
//
// It is a front end like the CLI: it talks to the daemon only through
// internal/client and never reads or writes a file (R-OWN-2). Secrets typed
// into the form are sent once, with the save, and never drawn: the fields
// are masked and the daemon never sends a stored value back.
//
// The model is a Bubble Tea model (model.go: state and the daemon's
// answers; input.go: keys). It draws the list with its detail pane
// (view.go, list.go), the form (form.go, whose request is built in
// request.go), and the help, review and login screens (screens.go).
// daemon.go holds every command that talks to the daemon; keys.go the key
// map, the footer and the help text.
package tui

package host

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/store"
)

// handEditPoll is how often the daemon looks at extensions.json for a
// hand edit: a page shows one within about this long, without Reload.
// Reading a file of a few kilobytes a second costs nothing measurable.
const handEditPoll = time.Second

// SettingsFile returns the hand edit of extensions.json the daemon has
// not applied, with why it cannot be applied as it is (the problems
// `plexus reload` would report); nil if the file is what the daemon last
// read or wrote.
func (h *Host) SettingsFile() *apitype.SettingsFile {
	path := filepath.Join(h.opts.Store.Home(), store.ConfigFile)
	data, exists, edited, err := h.opts.Store.HandEdit()
	switch {
	case err != nil:
		return &apitype.SettingsFile{Path: path, Problems: []string{"it cannot be read: " + err.Error()}}
	case !edited:
		return nil
	case !exists:
		data = []byte("{}") // a reload takes a removed file as empty
	}
	out := &apitype.SettingsFile{Path: path}
	next, err := config.Decode(data)
	if err == nil {
		err = config.Validate(next)
	}
	if ce, ok := err.(*config.Error); ok {
		for _, p := range ce.Problems {
			out.Problems = append(out.Problems, p.String())
		}
	} else if err != nil {
		out.Problems = []string{err.Error()}
	}
	return out
}

// watchHandEdits announces a hand edit of extensions.json (EventSettingsFile)
// as it appears, changes, or goes (applied, discarded, undone), until ctx
// is done: the web page shows a file broken by hand at once, with the line
// and column the CLI gives, rather than after a Reload.
func (h *Host) watchHandEdits(ctx context.Context) error {
	// None to begin with: the daemon has just read the file (a hand edit
	// already there when this starts is announced at the first look).
	var last *apitype.SettingsFile
	t := time.NewTicker(handEditPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := h.SettingsFile()
		if sameSettingsFile(last, now) {
			continue
		}
		last = now
		h.events.emit(apitype.Event{Type: apitype.EventSettingsFile, SettingsFile: now})
	}
}

func sameSettingsFile(a, b *apitype.SettingsFile) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path && slices.Equal(a.Problems, b.Problems)
}

package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/store"
)

// handEditPoll is how often the daemon looks at extensions.json for a
// hand edit where the file system cannot tell it: a page shows one within
// about this long, without Reload.
const handEditPoll = time.Second

// handEditQuiet is how long the file's events must have stopped before
// the watch looks at it.
const handEditQuiet = 100 * time.Millisecond

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
//
// It looks when the file system says the file changed (fsnotify, on the
// home directory: editors replace the file) and when the daemon changed
// its settings (lookAgain), not on a clock: a daemon idle between changes
// then runs none of its code, and keeps none of the executable's pages
// mapped for it after it shed them (docs/performance.md). Where the file
// system cannot be watched, it looks every handEditPoll, as cheaply as a
// stat when nothing changed.
func (h *Host) watchHandEdits(ctx context.Context) error {
	// None to begin with: the daemon has just read the file (a hand edit
	// already there when this starts is announced at the first look).
	var last *apitype.SettingsFile
	var seen handEditStamp
	path := filepath.Join(h.opts.Store.Home(), store.ConfigFile)
	changed, stop := watchFile(path)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-h.lookAgain:
		}
		if now := stampHandEdit(path, h.opts.Store.Shared()); now.same(seen) {
			continue
		} else {
			seen = now
		}
		now := h.SettingsFile()
		if sameSettingsFile(last, now) {
			continue
		}
		last = now
		h.events.emit(apitype.Event{Type: apitype.EventSettingsFile, SettingsFile: now})
	}
}

// settingsChanged has watchHandEdits look again: the daemon applied a
// hand edit (a reload adopts the file without writing it).
func (h *Host) settingsChanged() {
	select {
	case h.lookAgain <- struct{}{}:
	default:
	}
}

// watchFile returns a channel that has a value when the file at path may
// have changed: from fsnotify on its directory, or every handEditPoll
// where that cannot be watched (or stops working). stop ends the watch.
func watchFile(path string) (<-chan struct{}, func()) {
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	stop := func() { close(done); wg.Wait() }
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(filepath.Dir(path)); err != nil {
			w.Close()
		}
	}
	wg.Go(func() {
		if err == nil {
			defer w.Close()
			// A write is several events (truncate, write, rename): the
			// look waits until they have been quiet for handEditQuiet, so
			// that it does not read the file half written.
			// A first look once the watch is on, for an edit made before.
			quiet := time.NewTimer(handEditQuiet)
			defer quiet.Stop()
			for watching := true; watching; {
				select {
				case <-done:
					return
				case ev, ok := <-w.Events:
					if ok && filepath.Base(ev.Name) == filepath.Base(path) {
						quiet.Reset(handEditQuiet)
					}
					watching = ok
				case _, ok := <-w.Errors:
					quiet.Reset(handEditQuiet) // events may have been lost: look
					watching = ok
				case <-quiet.C:
					poke()
				}
			}
		}
		t := time.NewTicker(handEditPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				poke()
			}
		}
	})
	return changed, stop
}

func sameSettingsFile(a, b *apitype.SettingsFile) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path && slices.Equal(a.Problems, b.Problems)
}

// handEditStamp is what says that extensions.json, or the settings the
// daemon holds, may have changed: the file's identity, size and
// modification time, and the configuration the store holds (it replaces
// it whole on every save and reload). A hand edit that kept the file's
// size within one tick of a coarse clock (a FAT disk's two seconds) would
// go unseen until the next change: editors replace the file, or change
// its length, or take longer.
type handEditStamp struct {
	looked bool
	file   os.FileInfo // nil: there is none
	cfg    *config.File
}

func stampHandEdit(path string, cfg *config.File) handEditStamp {
	fi, _ := os.Stat(path)
	return handEditStamp{looked: true, file: fi, cfg: cfg}
}

func (a handEditStamp) same(b handEditStamp) bool {
	if !a.looked || !b.looked || a.cfg != b.cfg || (a.file == nil) != (b.file == nil) {
		return false
	}
	return a.file == nil || os.SameFile(a.file, b.file) && a.file.Size() == b.file.Size() && a.file.ModTime().Equal(b.file.ModTime())
}

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/store"
)

// StoreOptions name a database store (docs/team.md). With no URL the
// daemon keeps its documents as files in its home.
type StoreOptions struct {
	// URL is the database, postgres://….
	URL string
	// KeyFile holds the key that seals the documents (pgstore.ParseKey).
	KeyFile string
	// OldKeyFiles hold the keys of before a rotation: what they sealed is
	// read, and sealed again under KeyFile's at start.
	OldKeyFiles []string
}

// Documents are the documents of a home, every one the daemon keeps.
var Documents = []string{store.ConfigFile, store.CredsFile, oauth.FileName, pins.FileName}

// openDatabase opens the database store of so.
func openDatabase(ctx context.Context, so StoreOptions, log *slog.Logger) (*pgstore.Store, error) {
	if !pgstore.IsURL(so.URL) {
		return nil, errors.New("--store takes a postgres:// URL")
	}
	keys, err := pgstore.LoadKeys(so.KeyFile, so.OldKeyFiles...)
	if err != nil {
		return nil, err
	}
	return pgstore.Open(ctx, so.URL, keys, log)
}

// openState loads the settings and the pins, from the home or from the
// database store (db, nil for the home). A pins file that does not load
// stops the daemon, like a settings file: it would otherwise hold every
// server back.
func openState(ctx context.Context, home string, so StoreOptions, log *slog.Logger) (st *store.Store, pn *pins.Store, db *pgstore.Store, err error) {
	if so.URL == "" {
		st, err = store.Open(home)
	} else {
		if db, err = openDatabase(ctx, so, log.With("component", "store")); err != nil {
			return nil, nil, nil, err
		}
		if st, err = store.OpenOn(home, db); err != nil {
			db.Close()
		}
		// Settings left in the home are not read: say so, rather than
		// let someone edit a file that does nothing.
		for _, name := range Documents {
			if _, serr := os.Stat(filepath.Join(home, name)); serr == nil {
				log.Warn("the home's file is not used: the documents are in the database store",
					"file", filepath.Join(home, name), "hint", "plexus store migrate --from HOME --to URL moves a home into it")
			}
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	pn, err = pins.OpenOn(st.Docs(), st.Config().MCP.Servers)
	if err != nil {
		st.Docs().Close()
		return nil, nil, nil, err
	}
	return st, pn, db, nil
}

// MigrateStore copies every document of a home or a database (from) to
// another (to), with their kept versions, and verifies the copy by
// reading it back (docstore.Copy). A home must not have a daemon
// running: its lock is taken for the copy.
func MigrateStore(ctx context.Context, from, to string, so StoreOptions, overwrite bool) (docstore.Copied, error) {
	if from == to {
		return docstore.Copied{}, errors.New("--from and --to are the same place")
	}
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	open := func(where string) (docstore.Backend, error) {
		if pgstore.IsURL(where) {
			so.URL = where
			db, err := openDatabase(ctx, so, nil)
			if err != nil {
				return nil, err
			}
			closers = append(closers, db.Close)
			return db, nil
		}
		if err := store.EnsureHome(where); err != nil {
			return nil, err
		}
		lock, err := acquireLock(where)
		if err != nil {
			return nil, err
		}
		closers = append(closers, lock.release)
		return docstore.OpenFiles(where, Documents...)
	}
	src, err := open(from)
	if err != nil {
		return docstore.Copied{}, fmt.Errorf("the source: %w", err)
	}
	dst, err := open(to)
	if err != nil {
		return docstore.Copied{}, fmt.Errorf("the target: %w", err)
	}
	return docstore.Copy(src, dst, Documents, overwrite)
}

// storeKind says where the documents are kept, for the log: never the
// URL, which may hold a password.
func storeKind(so StoreOptions) string {
	if so.URL == "" {
		return "files"
	}
	return "database"
}

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/store"
)

// StoreOptions name a database store (docs/team.md). With no URL the
// daemon keeps its documents as files in its home.
type StoreOptions struct {
	// URL is the database, postgres://…. Deprecated when it holds a
	// password: a command line is read by every process of the machine;
	// URLFile or URLEnv keep it out of sight.
	URL string
	// KeyFile holds the key that seals the documents (pgstore.ParseKey);
	// without it, KeyEnv's variable holds the key itself.
	KeyFile string
	// OldKeyFiles hold the keys of before a rotation: what they sealed is
	// read, and sealed again under KeyFile's at start.
	OldKeyFiles []string
	// URLFile holds the URL (a file of a Kubernetes Secret).
	URLFile string
	// Bootstrap holds settings (extensions.json) written to a database
	// that has none yet, at the first start of the first replica: a
	// team's settings from the chart's values. A database that has
	// settings keeps them.
	Bootstrap string
}

// The environment variables a database store's URL and key may come in:
// read once at start, then removed from the daemon's environment, so that
// no process it starts inherits them.
const (
	URLEnv = "PLEXUS_STORE_URL"
	KeyEnv = "PLEXUS_STORE_KEY"
)

// resolveStore fills in so's URL from URLFile or URLEnv, and reads its
// keys from KeyFile or KeyEnv; both variables are removed from the
// environment. warn names a deprecated way so was given, "" for none.
func resolveStore(so StoreOptions) (out StoreOptions, keys pgstore.Keys, warn string, err error) {
	envURL, envKey := os.Getenv(URLEnv), os.Getenv(KeyEnv)
	os.Unsetenv(URLEnv)
	os.Unsetenv(KeyEnv)
	switch {
	case so.URL != "" && so.URLFile != "":
		return so, keys, "", errors.New("give the store's URL once: --store or --store-url-file")
	case so.URLFile != "":
		data, err := os.ReadFile(so.URLFile)
		if err != nil {
			return so, keys, "", fmt.Errorf("reading the store's URL: %w", err)
		}
		so.URL = strings.TrimSpace(string(data))
	case so.URL == "":
		so.URL = strings.TrimSpace(envURL)
	default:
		if u, err := url.Parse(so.URL); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				warn = "--store holds the database's password, and a command line is read by every process of the machine: give the URL in a file (--store-url-file) or in " + URLEnv + "; --store with a password will be refused by a later plexus"
			}
		}
	}
	if so.URL == "" {
		return so, keys, warn, nil
	}
	if so.KeyFile == "" && envKey != "" {
		cur, err := pgstore.ParseKey([]byte(envKey))
		if err != nil {
			return so, keys, warn, fmt.Errorf("%s: %w", KeyEnv, err)
		}
		old, err := loadOldKeys(so.OldKeyFiles)
		return so, pgstore.Keys{Current: cur, Old: old}, warn, err
	}
	keys, err = pgstore.LoadKeys(so.KeyFile, so.OldKeyFiles...)
	return so, keys, warn, err
}

// secretFiles are the files so names that hold a secret — the store's
// keys and URL — as absolute paths, for the sandbox to cover
// (host.Options.Secrets).
func (so StoreOptions) secretFiles() []string {
	var out []string
	for _, f := range append([]string{so.KeyFile, so.URLFile}, so.OldKeyFiles...) {
		if f == "" {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

func loadOldKeys(files []string) ([][]byte, error) {
	var out [][]byte
	for _, f := range files {
		k, err := pgstore.ReadKeyFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// Documents are the documents of a home, every one the daemon keeps.
var Documents = []string{store.ConfigFile, store.CredsFile, oauth.FileName, pins.FileName}

// openDatabase opens the database store of so, whose URL resolveStore
// filled in, under keys.
func openDatabase(ctx context.Context, so StoreOptions, keys pgstore.Keys, log *slog.Logger) (*pgstore.Store, error) {
	if !pgstore.IsURL(so.URL) {
		return nil, errors.New("--store takes a postgres:// URL")
	}
	if len(keys.Current) == 0 {
		return nil, errors.New("a database store needs a key to seal the secrets with: give --store-key-file, or the key in " + KeyEnv)
	}
	return pgstore.Open(ctx, so.URL, keys, log)
}

// openState loads the settings and the pins, from the home or from the
// database store (db, nil for the home). A pins file that does not load
// stops the daemon, like a settings file: it would otherwise hold every
// server back.
func openState(ctx context.Context, home string, so StoreOptions, log *slog.Logger) (st *store.Store, pn *pins.Store, db *pgstore.Store, err error) {
	so, keys, warn, err := resolveStore(so)
	if err != nil {
		return nil, nil, nil, err
	}
	if warn != "" {
		log.Warn("deprecated: " + warn)
	}
	if so.URL == "" {
		st, err = store.Open(home)
	} else {
		// The process holds the store's key and the database's password
		// from now on: no other process of its user may read its memory
		// or its environment (harden.go).
		hardenProcess(log)
		if db, err = openDatabase(ctx, so, keys, log.With("component", "store")); err != nil {
			return nil, nil, nil, err
		}
		if err = bootstrap(db, so.Bootstrap, log); err != nil {
			db.Close()
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

// bootstrap writes the settings of file into db if it has none: checked
// as any save is, and created on the condition that no replica starting
// beside this one created them first.
func bootstrap(db *pgstore.Store, file string, log *slog.Logger) error {
	if file == "" {
		return nil
	}
	cur, err := db.Read(store.ConfigFile)
	if err != nil || cur.Exists {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("--store-bootstrap: %w", err)
	}
	f, err := config.Decode(data)
	if err == nil {
		err = config.Validate(f)
	}
	if err != nil {
		return fmt.Errorf("--store-bootstrap %s: %w", file, err)
	}
	_, err = db.Write(store.ConfigFile, cur, data, false)
	var stale *docstore.StaleError
	switch {
	case errors.As(err, &stale):
		return nil // another replica wrote them first
	case err != nil:
		return fmt.Errorf("--store-bootstrap: %w", err)
	}
	log.Info("the database had no settings: wrote those of --store-bootstrap", "file", file)
	return nil
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
			so, keys, _, err := resolveStore(so)
			if err != nil {
				return nil, err
			}
			db, err := openDatabase(ctx, so, keys, nil)
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
// URL, which may hold a password. db is the database store, nil for files
// (the URL may have come from a file or the environment, not so.URL).
func storeKind(db *pgstore.Store) string {
	if db == nil {
		return "files"
	}
	return "database"
}

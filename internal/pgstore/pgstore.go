// Package pgstore keeps the daemon's documents in a PostgreSQL database
// that the replicas of a team share: a docstore.Backend. Every document is
// sealed at rest (keys.go); a write is conditional on the generation the
// writer read, checked and made in one transaction, and announced with
// NOTIFY, which Follow turns into calls of the daemon's reload.
//
// Tables (schema.go): plexus_docs (one row a document: name, generation,
// sealed data), plexus_revisions (the versions saves replaced),
// plexus_replicas (the replicas' internal addresses and heartbeats:
// replicas.go), plexus_leases (which replica runs each stdio server:
// leases.go, its changes of owner NOTIFYed on LeaseChannel) and
// plexus_schema (the schema's version).
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/plexus-mcp/plexus/internal/docstore"
)

// Channel is the NOTIFY channel of document changes; the payload is the
// document's name.
const Channel = "plexus_docs"

// opTimeout bounds one operation, so that a database that went away
// fails a save instead of holding it.
const opTimeout = 10 * time.Second

// IsURL reports whether where names a database rather than a home.
func IsURL(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// Store is a docstore.Backend in PostgreSQL.
type Store struct {
	url     string
	keys    Keys
	rowKeys [][]byte // seal the replicas' rows and the leases (replicas.go)
	log     *slog.Logger
	pool    *pgxpool.Pool
	warned  sync.Map // replica ids whose unsealed row was logged
}

var _ docstore.Backend = (*Store)(nil)

// Open connects to the database at url, creates or migrates the schema,
// and re-seals under keys.Current whatever an old key sealed (a rotation).
func Open(ctx context.Context, url string, keys Keys, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(keys.Current) != KeySize {
		return nil, errors.New("a database store needs a key to seal the secrets with: give --store-key-file")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error quotes the address, which may hold a password.
		return nil, errors.New("the store's address is not a valid postgres:// URL")
	}
	cfg.MaxConns = 4
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx) // the pool connects lazily: say now if it cannot
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, reach("connecting to the store", err)
	}
	s := &Store{url: url, keys: keys, rowKeys: derive(keys, rowLabel), log: log, pool: pool}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return migrate(ctx, tx) }); err != nil {
		pool.Close()
		return nil, fmt.Errorf("preparing the store's schema: %w", err)
	}
	if n, err := s.reseal(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("re-sealing the store under the current key: %w", err)
	} else if n > 0 {
		log.Info("store re-sealed under the current key", "values", n)
	}
	return s, nil
}

// Close closes the connections.
func (s *Store) Close() { s.pool.Close() }

// Ping checks that the database answers (a replica's readiness).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return reach("reaching the store", err)
	}
	return nil
}

// Shared is true: the replicas write the same documents.
func (s *Store) Shared() bool { return true }

// Where names the row.
func (s *Store) Where(name string) string { return name + " (in the database store)" }

func opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// Read reads a document and opens it.
func (s *Store) Read(name string) (docstore.Doc, error) {
	ctx, cancel := opContext()
	defer cancel()
	return s.read(ctx, s.pool, name, false)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) read(ctx context.Context, q querier, name string, forUpdate bool) (docstore.Doc, error) {
	sql := `SELECT gen, data FROM plexus_docs WHERE name = $1`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	var gen int64
	var sealed []byte
	err := q.QueryRow(ctx, sql, name).Scan(&gen, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return docstore.Doc{}, nil
	}
	if err != nil {
		return docstore.Doc{}, reach("reading "+name+" from the store", err)
	}
	plain, _, err := s.keys.open(name, sealed)
	if err != nil {
		return docstore.Doc{}, err
	}
	return docstore.Doc{Exists: true, Data: plain, Gen: gen}, nil
}

// Write replaces the document if its generation is still prev.Gen, in
// one transaction with the revision it keeps and the NOTIFY.
func (s *Store) Write(name string, prev docstore.Doc, data []byte, keep bool) (docstore.Doc, error) {
	sealed, err := s.keys.seal(name, data)
	if err != nil {
		return docstore.Doc{}, err
	}
	ctx, cancel := opContext()
	defer cancel()
	var out docstore.Doc
	committing := false // the transaction's work is done: what fails now is its COMMIT
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var gen int64
		var old []byte
		err := tx.QueryRow(ctx, `SELECT gen, data FROM plexus_docs WHERE name = $1 FOR UPDATE`, name).Scan(&gen, &old)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if prev.Exists {
				return &docstore.StaleError{Name: name}
			}
			tag, err := tx.Exec(ctx, `INSERT INTO plexus_docs (name, gen, data) VALUES ($1, 1, $2) ON CONFLICT (name) DO NOTHING`, name, sealed)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return s.stale(ctx, tx, name) // another replica created it first
			}
			gen = 1
		case err != nil:
			return err
		case !prev.Exists || gen != prev.Gen:
			return s.stale(ctx, tx, name)
		default:
			if keep {
				if err := keepRevision(ctx, tx, name, old); err != nil {
					return err
				}
			}
			gen++
			if _, err := tx.Exec(ctx, `UPDATE plexus_docs SET gen = $2, data = $3, updated_at = clock_timestamp() WHERE name = $1`, name, gen, sealed); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, name); err != nil {
			return err
		}
		out = docstore.Doc{Exists: true, Data: data, Gen: gen}
		committing = true
		return nil
	})
	if err != nil {
		return docstore.Doc{}, writeFailed(name, err, committing)
	}
	return out, nil
}

// stale reads the current version for a *StaleError.
func (s *Store) stale(ctx context.Context, tx pgx.Tx, name string) error {
	cur, err := s.read(ctx, tx, name, false)
	if err != nil {
		return err
	}
	return &docstore.StaleError{Name: name, Current: cur}
}

// keepRevision keeps old, sealed as it was, among name's revisions, and
// drops the oldest beyond docstore.MaxRevisions.
func keepRevision(ctx context.Context, tx pgx.Tx, name string, old []byte) error {
	if _, err := tx.Exec(ctx, `INSERT INTO plexus_revisions (name, saved_at, data) VALUES ($1, clock_timestamp(), $2)`, name, old); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM plexus_revisions WHERE name = $1 AND id NOT IN
		(SELECT id FROM plexus_revisions WHERE name = $1 ORDER BY saved_at DESC, id DESC LIMIT $2)`, name, docstore.MaxRevisions)
	return err
}

// Remove deletes the document if its generation is still prev.Gen.
func (s *Store) Remove(name string, prev docstore.Doc) error {
	ctx, cancel := opContext()
	defer cancel()
	committing := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var gen int64
		err := tx.QueryRow(ctx, `SELECT gen FROM plexus_docs WHERE name = $1 FOR UPDATE`, name).Scan(&gen)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		case gen != prev.Gen:
			return s.stale(ctx, tx, name)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM plexus_docs WHERE name = $1`, name); err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, name); err != nil {
			return err
		}
		committing = true
		return nil
	})
	if err != nil {
		return writeFailed(name, err, committing)
	}
	return nil
}

// revisionRow is one row of plexus_revisions.
type revisionRow struct {
	id    int64
	saved time.Time
	size  int64
}

func (s *Store) revisionRows(ctx context.Context, name string) ([]revisionRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, saved_at, length(data) FROM plexus_revisions WHERE name = $1 ORDER BY saved_at DESC, id DESC`, name)
	if err != nil {
		return nil, reach("listing the revisions of "+name, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (revisionRow, error) {
		var rr revisionRow
		err := r.Scan(&rr.id, &rr.saved, &rr.size)
		return rr, err
	})
}

// revisionName names a revision row: its time, and its id, which keeps
// two saved in the same microsecond apart.
func revisionName(name string, r revisionRow) string {
	return fmt.Sprintf("%s.%d", docstore.RevisionName(name, r.saved), r.id)
}

// Revisions lists the kept versions of name, newest first. Size is that
// of the sealed value.
func (s *Store) Revisions(name string) ([]docstore.Revision, error) {
	ctx, cancel := opContext()
	defer cancel()
	rows, err := s.revisionRows(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]docstore.Revision, 0, len(rows))
	for _, r := range rows {
		out = append(out, docstore.Revision{Name: revisionName(name, r), Saved: r.saved.UTC(), Size: r.size - int64(minSize)})
	}
	return out, nil
}

// RevisionData opens a kept version that Revisions lists.
func (s *Store) RevisionData(name, revision string) ([]byte, error) {
	ctx, cancel := opContext()
	defer cancel()
	rows, err := s.revisionRows(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if revisionName(name, r) != revision {
			continue
		}
		var sealed []byte
		if err := s.pool.QueryRow(ctx, `SELECT data FROM plexus_revisions WHERE id = $1`, r.id).Scan(&sealed); err != nil {
			return nil, fmt.Errorf("reading revision %s: %w", revision, err)
		}
		plain, _, err := s.keys.open(name, sealed)
		return plain, err
	}
	return nil, fmt.Errorf("no kept revision named %q: %w", revision, fs.ErrNotExist)
}

// AddRevision keeps data as a version of name replaced at saved.
func (s *Store) AddRevision(name string, saved time.Time, data []byte) error {
	sealed, err := s.keys.seal(name, data)
	if err != nil {
		return err
	}
	ctx, cancel := opContext()
	defer cancel()
	if _, err := s.pool.Exec(ctx, `INSERT INTO plexus_revisions (name, saved_at, data) VALUES ($1, $2, $3)`, name, saved, sealed); err != nil {
		return writeFailed(name, err, false)
	}
	return nil
}

// reseal seals again under the current key every value an old key
// sealed, in one transaction, and returns how many there were. The
// documents' content and generations do not change.
func (s *Store) reseal(ctx context.Context) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, table := range []struct{ name, key string }{{"plexus_docs", "name"}, {"plexus_revisions", "id"}} {
			rows, err := tx.Query(ctx, `SELECT `+table.key+`::text, name, data FROM `+table.name+` FOR UPDATE`)
			if err != nil {
				return err
			}
			type row struct {
				key, name string
				data      []byte
			}
			all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
				var x row
				err := r.Scan(&x.key, &x.name, &x.data)
				return x, err
			})
			if err != nil {
				return err
			}
			for _, x := range all {
				plain, current, err := s.keys.open(x.name, x.data)
				if err != nil {
					return err
				}
				if current {
					continue
				}
				sealed, err := s.keys.seal(x.name, plain)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE `+table.name+` SET data = $2 WHERE `+table.key+`::text = $1`, x.key, sealed); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	return n, err
}

package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, in order: migrations[i] takes the
// database from version i to i+1. A migration is never changed once
// released; a change of the schema is a new one at the end.
var migrations = []string{
	`CREATE TABLE plexus_docs (
		name       text PRIMARY KEY,
		gen        bigint NOT NULL,
		data       bytea NOT NULL,
		updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
	);
	CREATE TABLE plexus_revisions (
		id       bigserial PRIMARY KEY,
		name     text NOT NULL,
		saved_at timestamptz NOT NULL,
		data     bytea NOT NULL
	);
	CREATE INDEX plexus_revisions_by_name ON plexus_revisions (name, saved_at DESC, id DESC);`,
	// The replicas that serve the internal channel (replicas.go).
	`CREATE TABLE plexus_replicas (
		id   text PRIMARY KEY,
		addr text NOT NULL,
		beat timestamptz NOT NULL DEFAULT clock_timestamp()
	);`,
	// Which replica runs each stdio server (leases.go).
	`CREATE TABLE plexus_leases (
		server  text PRIMARY KEY,
		owner   text NOT NULL,
		token   bigint NOT NULL,
		expires timestamptz NOT NULL
	);`,
	// Rows only the store's key makes (rows.go): a replica's row and a
	// lease carry a MAC of their fields, and a row without a valid one is
	// not trusted. A lease counts its renewals, which the other replicas
	// watch (peer.Owners) instead of comparing clocks; a replica being
	// stopped says so (draining), and names the certificate of its
	// channel (fp, the SHA-256 of its DER).
	`ALTER TABLE plexus_replicas ADD COLUMN fp text NOT NULL DEFAULT '',
		ADD COLUMN draining boolean NOT NULL DEFAULT false,
		ADD COLUMN sig bytea NOT NULL DEFAULT '';
	ALTER TABLE plexus_leases ADD COLUMN renewals bigint NOT NULL DEFAULT 0,
		ADD COLUMN sig bytea NOT NULL DEFAULT '';`,
	// The team's audit log (audit.go): each replica's records, a chain
	// of its own by sequence number.
	`CREATE TABLE plexus_audit (
		replica text NOT NULL,
		seq     bigint NOT NULL,
		at      timestamptz NOT NULL,
		record  bytea NOT NULL,
		PRIMARY KEY (replica, seq)
	);
	CREATE INDEX plexus_audit_by_time ON plexus_audit (at DESC);`,
}

// SchemaVersion is the version this plexus creates and reads.
var SchemaVersion = len(migrations)

// schemaLock is the advisory lock that serialises the migrations of the
// replicas that start together.
const schemaLock = 0x706c6578 // "plex"

// migrate brings the schema to SchemaVersion, in one transaction. It is
// idempotent, and refuses a database of a newer plexus.
func migrate(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLock); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS plexus_schema (version integer NOT NULL)`); err != nil {
		return err
	}
	var v int
	err := tx.QueryRow(ctx, `SELECT version FROM plexus_schema`).Scan(&v)
	switch {
	case err == pgx.ErrNoRows:
		if _, err := tx.Exec(ctx, `INSERT INTO plexus_schema (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("the database's schema is version %d, newer than this plexus knows (%d): run a newer plexus", v, SchemaVersion)
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	_, err = tx.Exec(ctx, `UPDATE plexus_schema SET version = $1`, v)
	return err
}

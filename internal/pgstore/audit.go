package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuditLabel derives the key of the audit log's chain (Derive): records a
// writer of the database cannot forge without the store's key.
const AuditLabel = "plexus audit chain v1"

// DefaultAuditRows bounds the team's audit table: the oldest rows beyond
// it are pruned as new ones come.
const DefaultAuditRows = 1_000_000

// AuditRow is one record of the team's audit log: the replica that wrote
// it, its place in that replica's chain, when, and the record's JSON as
// the replica wrote it.
type AuditRow struct {
	Replica string
	Seq     uint64
	At      time.Time
	Record  []byte
}

// AppendAudit adds rows, in one batch; a row already there (the same
// replica and sequence number) is left as it was.
func (s *Store) AppendAudit(ctx context.Context, rows []AuditRow) error {
	b := &pgx.Batch{}
	for _, r := range rows {
		b.Queue(`INSERT INTO plexus_audit (replica, seq, at, record) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			r.Replica, int64(r.Seq), r.At, r.Record)
	}
	return s.pool.SendBatch(ctx, b).Close()
}

// AuditRows returns the newest rows written at or after since (zero: any
// time), at most limit, oldest first.
func (s *Store) AuditRows(ctx context.Context, since time.Time, limit int) ([]AuditRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT replica, seq, at, record FROM
		(SELECT * FROM plexus_audit WHERE at >= $1 ORDER BY at DESC, replica, seq DESC LIMIT $2) newest
		ORDER BY at, replica, seq`, since, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditRow, error) {
		var a AuditRow
		var seq int64
		err := r.Scan(&a.Replica, &seq, &a.At, &a.Record)
		a.Seq = uint64(seq)
		return a, err
	})
}

// PruneAudit keeps the newest keep rows of the table and deletes the
// rest; it returns how many it deleted.
func (s *Store) PruneAudit(ctx context.Context, keep int) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM plexus_audit WHERE at < (SELECT at FROM plexus_audit ORDER BY at DESC OFFSET $1 LIMIT 1)`, keep-1)
	return tag.RowsAffected(), err
}

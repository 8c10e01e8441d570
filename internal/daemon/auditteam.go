package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"time"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/pgstore"
)

// teamAudit is the team's audit log in the database store: every
// replica's records in plexus_audit, each replica's a chain signed with
// the key derived from the store's key (pgstore.AuditLabel), the table
// bounded to pgstore.DefaultAuditRows (pruned every pruneEvery writes).
type teamAudit struct {
	db     *pgstore.Store
	keep   int
	writes int // guarded by the log's writer, its only caller
}

const pruneEvery = 1000

func (t *teamAudit) Write(ctx context.Context, recs []audit.Record) error {
	rows := make([]pgstore.AuditRow, 0, len(recs))
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			continue
		}
		rows = append(rows, pgstore.AuditRow{Replica: recs[i].Replica, Seq: recs[i].Seq, At: recs[i].Time, Record: b})
	}
	if err := t.db.AppendAudit(ctx, rows); err != nil {
		return err
	}
	if t.writes++; t.writes%pruneEvery == 0 {
		_, err := t.db.PruneAudit(ctx, t.keep)
		return err
	}
	return nil
}

func (t *teamAudit) Records(ctx context.Context, since time.Time, n int) ([]audit.Record, error) {
	rows, err := t.db.AuditRows(ctx, since, n)
	if err != nil {
		return nil, err
	}
	recs := make([]audit.Record, 0, len(rows))
	for _, row := range rows {
		var r audit.Record
		if json.Unmarshal(row.Record, &r) != nil {
			r = audit.Record{Time: row.At, Kind: audit.KindAudit, Outcome: "unreadable"}
		}
		// What the row's columns say wins: a row moved to another
		// replica's chain or place fails verification there.
		r.Replica, r.Seq = row.Replica, row.Seq
		recs = append(recs, r)
	}
	return recs, nil
}

// teamAuditParts are the audit log's replica name, chain and sink of a
// replica of the database store db; none for a daemon of its own.
func teamAuditParts(db *pgstore.Store) (string, *audit.Chain, []audit.Sink) {
	if db == nil {
		return "", nil, nil
	}
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	// A chain per run of a replica: it starts at 1 with a name no run
	// had before.
	replica := host + "." + hex.EncodeToString(b)
	keys := db.Derive(pgstore.AuditLabel) // the current key's first, then those of before a rotation
	chain := audit.NewChain(keys[0], 0, "", keys[1:]...)
	return replica, chain, []audit.Sink{&teamAudit{db: db, keep: pgstore.DefaultAuditRows}}
}

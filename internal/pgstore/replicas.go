package pgstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoReplica is what Replica says of a replica that has no heartbeat
// within the time asked: it is gone, or never was.
var ErrNoReplica = errors.New("no such live replica")

// forgetAfter is how long a replica's row outlives its last heartbeat
// before a beat of another removes it (it is long dead by then).
const forgetAfter = 10 * time.Minute

// Beat records that replica id is alive and reachable at addr, and
// removes the rows of replicas dead for long.
func (s *Store) Beat(ctx context.Context, id, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO plexus_replicas (id, addr, beat) VALUES ($1, $2, clock_timestamp())
			ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, beat = excluded.beat`, id, addr); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM plexus_replicas WHERE beat < clock_timestamp() - make_interval(secs => $1)`,
			forgetAfter.Seconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("recording the replica's heartbeat: %w", err)
	}
	return nil
}

// Replica returns the address of replica id if its last heartbeat is
// within the last within (by the database's clock, which every replica
// shares); else ErrNoReplica.
func (s *Store) Replica(ctx context.Context, id string, within time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var addr string
	err := s.pool.QueryRow(ctx, `SELECT addr FROM plexus_replicas WHERE id = $1 AND beat > clock_timestamp() - make_interval(secs => $2)`,
		id, within.Seconds()).Scan(&addr)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", ErrNoReplica
	case err != nil:
		return "", fmt.Errorf("looking up a replica: %w", err)
	}
	return addr, nil
}

// Leave removes replica id's row: it stops serving.
func (s *Store) Leave(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM plexus_replicas WHERE id = $1`, id); err != nil {
		return fmt.Errorf("removing the replica's row: %w", err)
	}
	return nil
}

// Derive returns HMAC-SHA256(key, label) under the current key and then
// each old one: secrets of purpose label that every replica with the
// same key file computes alike, and that reveal nothing of the key.
func (s *Store) Derive(label string) [][]byte {
	out := make([][]byte, 0, 1+len(s.keys.Old))
	for _, k := range append([][]byte{s.keys.Current}, s.keys.Old...) {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(label))
		out = append(out, m.Sum(nil))
	}
	return out
}

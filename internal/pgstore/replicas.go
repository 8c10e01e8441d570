package pgstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoReplica is what Replica says of a replica that has no heartbeat
// within the time asked, or whose row the store's key did not seal: it is
// gone, never was, or was forged.
var ErrNoReplica = errors.New("no such live replica")

// forgetAfter is how long a replica's row outlives its last heartbeat
// before a beat of another removes it (it is long dead by then).
const forgetAfter = 10 * time.Minute

// rowLabel derives the key that seals the rows of plexus_replicas and
// plexus_leases (Derive): a writer of the database without the store's
// key can delete them, but not make one a replica trusts.
const rowLabel = "plexus rows v1"

// Replica is one replica's row: its id, the address of its internal
// channel, the SHA-256 of its channel's certificate (hex), and whether it
// is being stopped (it hands its servers over and takes none). Alive is
// not part of the row: Replicas says whether it beat recently.
type Replica struct {
	ID       string
	Addr     string
	FP       string
	Draining bool
	Alive    bool
}

// mac seals fields (each length-prefixed, after kind) under key.
func mac(key []byte, kind string, fields ...string) []byte {
	m := hmac.New(sha256.New, key)
	var n [4]byte
	for _, f := range append([]string{kind}, fields...) {
		binary.BigEndian.PutUint32(n[:], uint32(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

// seal is the MAC of a row under the current key.
func (s *Store) seal(kind string, fields ...string) []byte {
	return mac(s.rowKeys[0], kind, fields...)
}

// sealedBy reports whether sig is the MAC of a row under one of the keys
// (the current or, during a rotation, an old one).
func (s *Store) sealedBy(sig []byte, kind string, fields ...string) bool {
	ok := false
	for _, k := range s.rowKeys {
		ok = hmac.Equal(sig, mac(k, kind, fields...)) || ok
	}
	return ok
}

func (r Replica) fields() []string {
	return []string{r.ID, r.Addr, r.FP, strconv.FormatBool(r.Draining)}
}

// Beat records that replica r is alive, with its row sealed, and removes
// the rows of replicas dead for long.
func (s *Store) Beat(ctx context.Context, r Replica) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO plexus_replicas (id, addr, fp, draining, sig, beat) VALUES ($1, $2, $3, $4, $5, clock_timestamp())
			ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, fp = excluded.fp, draining = excluded.draining, sig = excluded.sig, beat = excluded.beat`,
			r.ID, r.Addr, r.FP, r.Draining, s.seal("replica", r.fields()...)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM plexus_replicas WHERE beat < clock_timestamp() - make_interval(secs => $1)`,
			forgetAfter.Seconds())
		return err
	})
	if err != nil {
		return reach("recording the replica's heartbeat", err)
	}
	return nil
}

// Replica returns replica id's row if its last heartbeat is within the
// last within (by the database's clock, which every replica shares) and
// the store's key sealed it; else ErrNoReplica.
func (s *Store) Replica(ctx context.Context, id string, within time.Duration) (Replica, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var r Replica
	var sig []byte
	err := s.pool.QueryRow(ctx, `SELECT id, addr, fp, draining, sig FROM plexus_replicas WHERE id = $1 AND beat > clock_timestamp() - make_interval(secs => $2)`,
		id, within.Seconds()).Scan(&r.ID, &r.Addr, &r.FP, &r.Draining, &sig)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Replica{}, ErrNoReplica
	case err != nil:
		return Replica{}, reach("looking up a replica", err)
	case !s.sealedBy(sig, "replica", r.fields()...):
		s.unsealed(id)
		return Replica{}, ErrNoReplica
	}
	return r, nil
}

// Replicas returns every replica whose row the store's key sealed, by
// id; Alive says it beat within the last within.
func (s *Store) Replicas(ctx context.Context, within time.Duration) (map[string]Replica, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, addr, fp, draining, sig, beat > clock_timestamp() - make_interval(secs => $1) FROM plexus_replicas`,
		within.Seconds())
	if err != nil {
		return nil, reach("listing the replicas", err)
	}
	out := map[string]Replica{}
	var r Replica
	var sig []byte
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &r.Addr, &r.FP, &r.Draining, &sig, &r.Alive}, func() error {
		if s.sealedBy(sig, "replica", r.fields()...) {
			out[r.ID] = r
		} else {
			s.unsealed(r.ID)
		}
		return nil
	})
	if err != nil {
		return nil, reach("listing the replicas", err)
	}
	return out, nil
}

// Leave removes replica id's row: it stops serving.
func (s *Store) Leave(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM plexus_replicas WHERE id = $1`, id); err != nil {
		return reach("removing the replica's row", err)
	}
	return nil
}

// Derive returns HMAC-SHA256(key, label) under the current key and then
// each old one: secrets of purpose label that every replica with the
// same key file computes alike, and that reveal nothing of the key.
func (s *Store) Derive(label string) [][]byte {
	return derive(s.keys, label)
}

func derive(keys Keys, label string) [][]byte {
	out := make([][]byte, 0, 1+len(keys.Old))
	for _, k := range append([][]byte{keys.Current}, keys.Old...) {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(label))
		out = append(out, m.Sum(nil))
	}
	return out
}

// reach wraps a failed operation of what; one that failed because the
// database could not be reached also wraps ErrUnreachable.
func reach(what string, err error) error {
	if unreachable(err) {
		return fmt.Errorf("%s: %w: %w", what, ErrUnreachable, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unsealed logs, once a row, a replica's row the store's key did not seal.
func (s *Store) unsealed(id string) {
	if _, dup := s.warned.LoadOrStore(id, true); !dup {
		s.log.Warn("a replica's row is not sealed by the store's key: ignored (someone without the key wrote it)", "replica", id)
	}
}

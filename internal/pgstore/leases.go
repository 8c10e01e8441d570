package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LeaseChannel is the NOTIFY channel of lease changes: the payload is the
// server whose lease changed owner.
const LeaseChannel = "plexus_leases"

// Lease is who runs a server: the owning replica, its internal address
// (from plexus_replicas; "" when it has no row), and the fencing token,
// which grows at every change of owner.
type Lease struct {
	Owner string
	Addr  string
	Token int64
}

// Claim takes or renews, for replica self, the lease of each of servers
// that is free, expired or already its own, for ttl from now by the
// database's clock; and returns every one's lease as it stands after. A
// lease another replica holds unexpired is left alone. All in one
// transaction, so that two replicas claiming at once cannot both win.
func (s *Store) Claim(ctx context.Context, servers []string, self string, ttl time.Duration) (map[string]Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	out := make(map[string]Lease, len(servers))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		clear(out)
		for _, name := range servers {
			// The lease changes owner when the row is new, or when the
			// token grew: then the other replicas are told at once.
			var moved bool
			err := tx.QueryRow(ctx, `WITH prev AS (SELECT token FROM plexus_leases WHERE server = $1)
				INSERT INTO plexus_leases (server, owner, token, expires)
				VALUES ($1, $2, 1, clock_timestamp() + make_interval(secs => $3))
				ON CONFLICT (server) DO UPDATE SET
					owner = excluded.owner,
					token = CASE WHEN plexus_leases.owner = excluded.owner THEN plexus_leases.token ELSE plexus_leases.token + 1 END,
					expires = excluded.expires
				WHERE plexus_leases.owner = excluded.owner OR plexus_leases.expires < clock_timestamp()
				RETURNING plexus_leases.token IS DISTINCT FROM (SELECT token FROM prev)`,
				name, self, ttl.Seconds()).Scan(&moved)
			switch {
			case errors.Is(err, pgx.ErrNoRows): // another replica holds it
			case err != nil:
				return err
			case moved:
				if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, LeaseChannel, name); err != nil {
					return err
				}
			}
			var l Lease
			var addr *string
			if err := tx.QueryRow(ctx, `SELECT l.owner, l.token, r.addr FROM plexus_leases l
				LEFT JOIN plexus_replicas r ON r.id = l.owner WHERE l.server = $1`, name).Scan(&l.Owner, &l.Token, &addr); err != nil {
				return err
			}
			if addr != nil {
				l.Addr = *addr
			}
			out[name] = l
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claiming the servers' leases: %w", err)
	}
	return out, nil
}

// Release gives up replica self's leases of servers, so that another
// replica takes them at its next claim instead of after they expire. The
// rows stay, expired: the token of the next owner still grows.
func (s *Store) Release(ctx context.Context, servers []string, self string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE plexus_leases SET expires = '-infinity' WHERE owner = $1 AND server = ANY($2)`, self, servers); err != nil {
			return err
		}
		// Told, the others claim at once instead of at their next claim.
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, s) FROM unnest($2::text[]) AS s`, LeaseChannel, servers)
		return err
	})
	if err != nil {
		return fmt.Errorf("releasing the servers' leases: %w", err)
	}
	return nil
}

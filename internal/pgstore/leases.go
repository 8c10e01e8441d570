package pgstore

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// LeaseChannel is the NOTIFY channel of lease changes: the payload is the
// server whose lease changed owner.
const LeaseChannel = "plexus_leases"

// Lease is one row of plexus_leases: who runs a server. Owner is "" for
// a lease nobody holds (given up, or never taken); Token grows at every
// change of owner; Renewals counts its owner's renewals since it took it,
// which the other replicas watch to tell a live owner from a gone one.
// Sealed says the store's key sealed the row: one it did not is taken
// for free. Addr and FP are the owner's channel address and certificate,
// from its row if that is sealed ("" otherwise).
type Lease struct {
	Server   string
	Owner    string
	Token    int64
	Renewals int64
	Sealed   bool
	Addr     string
	FP       string
}

func (l Lease) fields() []string {
	return []string{l.Server, l.Owner, strconv.FormatInt(l.Token, 10), strconv.FormatInt(l.Renewals, 10)}
}

// Claim decides, for replica self, on the lease of each of servers in one
// transaction that locks their rows: take says, of each lease as it
// stands, whether self should hold it — a lease self holds is then
// renewed, any other taken (its token grows; the other replicas are told
// with NOTIFY). ttl sets the expiry kept for people reading the table
// (expires); the replicas go by Renewals. It returns every lease as it
// stands after.
func (s *Store) Claim(ctx context.Context, self string, servers []string, ttl time.Duration, take func(Lease) bool) (map[string]Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	servers = slices.Sorted(slices.Values(servers)) // rows are locked in one order: no deadlock between replicas
	out := make(map[string]Lease, len(servers))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		clear(out)
		for _, name := range servers {
			free := Lease{Server: name}
			if _, err := tx.Exec(ctx, `INSERT INTO plexus_leases (server, owner, token, renewals, expires, sig) VALUES ($1, '', 0, 0, '-infinity', $2)
				ON CONFLICT (server) DO NOTHING`, name, s.seal("lease", free.fields()...)); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT server, owner, token, renewals, sig FROM plexus_leases WHERE server = ANY($1) ORDER BY server FOR UPDATE`, servers)
		if err != nil {
			return err
		}
		var cur []Lease
		var l Lease
		var sig []byte
		if _, err := pgx.ForEachRow(rows, []any{&l.Server, &l.Owner, &l.Token, &l.Renewals, &sig}, func() error {
			l.Sealed = s.sealedBy(sig, "lease", l.fields()...)
			cur = append(cur, l)
			return nil
		}); err != nil {
			return err
		}
		for _, l := range cur {
			if take(l) {
				if l.Owner == self && l.Sealed {
					l.Renewals++
				} else {
					l.Owner, l.Token, l.Renewals, l.Sealed = self, l.Token+1, 0, true
					if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, LeaseChannel, l.Server); err != nil {
						return err
					}
				}
				if _, err := tx.Exec(ctx, `UPDATE plexus_leases SET owner = $2, token = $3, renewals = $4, sig = $5,
					expires = clock_timestamp() + make_interval(secs => $6) WHERE server = $1`,
					l.Server, l.Owner, l.Token, l.Renewals, s.seal("lease", l.fields()...), ttl.Seconds()); err != nil {
					return err
				}
			}
			out[l.Server] = l
		}
		return s.addresses(ctx, tx, out)
	})
	if err != nil {
		return nil, reach("claiming the servers' leases", err)
	}
	return out, nil
}

// addresses fills in the owners' addresses from their sealed rows.
func (s *Store) addresses(ctx context.Context, tx pgx.Tx, leases map[string]Lease) error {
	var owners []string
	for _, l := range leases {
		if l.Owner != "" && l.Sealed {
			owners = append(owners, l.Owner)
		}
	}
	if len(owners) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT id, addr, fp, draining, sig FROM plexus_replicas WHERE id = ANY($1)`, owners)
	if err != nil {
		return err
	}
	byID := map[string]Replica{}
	var r Replica
	var sig []byte
	if _, err := pgx.ForEachRow(rows, []any{&r.ID, &r.Addr, &r.FP, &r.Draining, &sig}, func() error {
		if s.sealedBy(sig, "replica", r.fields()...) {
			byID[r.ID] = r
		} else {
			s.unsealed(r.ID)
		}
		return nil
	}); err != nil {
		return err
	}
	for name, l := range leases {
		if r, ok := byID[l.Owner]; ok && l.Sealed {
			l.Addr, l.FP = r.Addr, r.FP
			leases[name] = l
		}
	}
	return nil
}

// Release gives up replica self's leases of servers, so that another
// replica takes them at its next claim (told at once with NOTIFY). The
// rows stay, free: the token of the next owner still grows.
func (s *Store) Release(ctx context.Context, servers []string, self string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT server, token FROM plexus_leases WHERE owner = $1 AND server = ANY($2) ORDER BY server FOR UPDATE`, self, servers)
		if err != nil {
			return err
		}
		var held []Lease
		var l Lease
		if _, err := pgx.ForEachRow(rows, []any{&l.Server, &l.Token}, func() error { held = append(held, l); return nil }); err != nil {
			return err
		}
		for _, l := range held {
			l.Owner, l.Renewals = "", 0
			if _, err := tx.Exec(ctx, `UPDATE plexus_leases SET owner = '', renewals = 0, expires = '-infinity', sig = $2 WHERE server = $1`,
				l.Server, s.seal("lease", l.fields()...)); err != nil {
				return err
			}
			// Told, the others claim at once instead of at their next claim.
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, LeaseChannel, l.Server); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return reach("releasing the servers' leases", err)
	}
	return nil
}

package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Follow listens on Channel on a connection of its own and calls changed
// with each document another daemon wrote. Each time the connection is
// (re)established it calls changed("") first: a change made while it was
// away was announced to nobody, so the caller reads everything again and
// compares. A lost connection is retried, every second at most, until ctx
// is done.
func (s *Store) Follow(ctx context.Context, changed func(name string)) error {
	return s.follow(ctx, Channel, changed)
}

// FollowLeases is Follow of LeaseChannel: changed is called with the
// server whose lease changed owner, and with "" at each (re)connection.
func (s *Store) FollowLeases(ctx context.Context, changed func(server string)) error {
	return s.follow(ctx, LeaseChannel, changed)
}

// follow runs listen on channel until ctx is done.
func (s *Store) follow(ctx context.Context, channel string, changed func(string)) error {
	backoff := 100 * time.Millisecond
	for {
		err := s.listen(ctx, channel, changed, func() { backoff = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("store: change notices lost, reconnecting", "channel", channel, "err", err, "retry_ms", backoff.Milliseconds())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// listen runs one connection until it fails.
func (s *Store) listen(ctx context.Context, channel string, changed func(string), up func()) error {
	cctx, cancel := context.WithTimeout(ctx, opTimeout)
	conn, err := pgx.Connect(cctx, s.url)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
		return err
	}
	up()
	changed("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		changed(n.Payload)
	}
}

package oauth_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestConcurrentRefreshesNeverLoseALogin: refreshes of one login
// that start at once — goroutines of one daemon, or two daemons sharing a
// PostgreSQL store — spend its refresh token once. The authorization
// server rotates refresh tokens and takes a second use of one for a
// replay, revoking every token of the client (as oidc-provider does): a
// loser that spent its own copy, or a last write that put back an old
// token, would lose the login. The losers must pick up the winner's
// tokens.
func TestConcurrentRefreshesNeverLoseALogin(t *testing.T) {
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	t.Run("one daemon", func(t *testing.T) {
		t.Parallel()
		as := authserver.Start(t, authserver.Options{RevokeOnReuse: true})
		var c clock
		m := open(t, t.TempDir(), &c, func(o *oauth.Options) { o.NoBackgroundRefresh = true })
		login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
		raceRefreshes(t, as, &c, rounds, []*oauth.Manager{m})
	})
	t.Run("two daemons on one PostgreSQL store", func(t *testing.T) {
		t.Parallel()
		started := time.Now()
		pg := testenv.StartPostgres(t)
		t.Logf("PostgreSQL started in %s", time.Since(started).Round(time.Millisecond))
		defer func(raced time.Time) { t.Logf("the refresh races took %s", time.Since(raced).Round(time.Millisecond)) }(time.Now())
		keys := pgstore.Keys{Current: make([]byte, pgstore.KeySize)}
		rand.Read(keys.Current)
		as := authserver.Start(t, authserver.Options{RevokeOnReuse: true})
		var c clock
		var ms []*oauth.Manager
		for range 2 {
			s, err := pgstore.Open(context.Background(), pg.URL, keys, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			m, err := oauth.Open(oauth.Options{Docs: s, Now: c.now, NoBackgroundRefresh: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			ms = append(ms, m)
		}
		login(t, ms[0], oauth.LoginParams{Server: "srv", URL: as.MCPURL})
		// The other daemon reads the login as its follower would.
		if err := ms[1].Refresh(); err != nil {
			t.Fatal(err)
		}
		if st := ms[1].Status("srv"); !st.LoggedIn {
			t.Fatalf("the second daemon does not see the login: %+v", st)
		}
		raceRefreshes(t, as, &c, rounds, ms)
	})
}

// raceRefreshes lets the login's token expire, then asks each manager for
// it from several goroutines at once, rounds times: every ask must get a
// token the server takes, with one refresh a round and no replay.
func raceRefreshes(t *testing.T, as *authserver.Server, c *clock, rounds int, ms []*oauth.Manager) {
	t.Helper()
	const perManager = 6
	for round := range rounds {
		before := as.Refreshes.Load()
		c.advance(2 * time.Hour) // every copy of the token expires
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, perManager*len(ms))
		tokens := make(chan string, perManager*len(ms))
		for i, m := range ms {
			for range perManager {
				wg.Go(func() {
					<-start
					tok, err := m.AccessToken(context.Background(), "srv")
					if err == nil && tok == "" {
						err = fmt.Errorf("daemon %d got no token", i)
					}
					errs <- err
					tokens <- tok
				})
			}
		}
		close(start)
		wg.Wait()
		close(errs)
		close(tokens)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		seen := map[string]bool{}
		for tok := range tokens {
			seen[tok] = true
		}
		if got := as.Refreshes.Load() - before; got != 1 || as.Replays.Load() != 0 || len(seen) != 1 {
			t.Fatalf("round %d: %d refreshes, %d replays, %d different tokens handed out; want 1, 0, 1", round, got, as.Replays.Load(), len(seen))
		}
		for i, m := range ms {
			if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
				t.Fatalf("round %d: daemon %d cannot call with the login: %v", round, i, err)
			}
			if st := m.Status("srv"); !st.LoggedIn || st.NeedsLogin {
				t.Fatalf("round %d: daemon %d: %+v", round, i, st)
			}
		}
	}
}

// TestStaleWriteKeepsOtherLogins: a daemon that saves a login over a
// version of the store another daemon changed meanwhile keeps that
// daemon's change of another login (the store is written per login, not
// last writer wins).
func TestStaleWriteKeepsOtherLogins(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	shared := newMemStore()
	var c clock
	a, err := oauth.Open(oauth.Options{Docs: shared, Now: c.now, NoBackgroundRefresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := oauth.Open(oauth.Options{Docs: shared, Now: c.now, NoBackgroundRefresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// a and b each log in a server, neither having read the other's.
	login(t, a, oauth.LoginParams{Server: "one", URL: as.MCPURL})
	login(t, b, oauth.LoginParams{Server: "two", URL: as.MCPURL})
	c2, err := oauth.Open(oauth.Options{Docs: shared, Now: c.now, NoBackgroundRefresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for _, s := range []string{"one", "two"} {
		if st := c2.Status(s); !st.LoggedIn {
			t.Errorf("login %s was lost by the other daemon's save: %+v", s, st)
		}
	}
}

// memStore is a shared docstore.Backend in memory: writes are conditional
// on the generation read, as PostgreSQL's are.
type memStore struct {
	mu  sync.Mutex
	doc docstore.Doc
}

func newMemStore() *memStore { return &memStore{} }

func (s *memStore) Read(string) (docstore.Doc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doc, nil
}

func (s *memStore) Write(name string, prev docstore.Doc, data []byte, _ bool) (docstore.Doc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev.Exists != s.doc.Exists || prev.Gen != s.doc.Gen {
		return docstore.Doc{}, &docstore.StaleError{Name: name, Current: s.doc}
	}
	s.doc = docstore.Doc{Exists: true, Data: append([]byte(nil), data...), Gen: s.doc.Gen + 1}
	return s.doc, nil
}

func (s *memStore) Remove(string, docstore.Doc) error             { return nil }
func (s *memStore) Revisions(string) ([]docstore.Revision, error) { return nil, nil }
func (s *memStore) RevisionData(string, string) ([]byte, error)   { return nil, nil }
func (s *memStore) AddRevision(string, time.Time, []byte) error   { return nil }
func (s *memStore) Shared() bool                                  { return true }
func (s *memStore) Where(name string) string                      { return name + " (in memory)" }
func (s *memStore) Follow(context.Context, func(string)) error    { return nil }
func (s *memStore) Close()                                        {}

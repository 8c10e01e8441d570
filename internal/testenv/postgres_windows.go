package testenv

import "testing"

// Postgres is a throwaway PostgreSQL cluster; the tests that use one run
// on unix systems only (postgres.go).
type Postgres struct {
	URL  string
	Port int
}

// StartPostgres skips the test: throwaway clusters are started on unix
// systems only.
func StartPostgres(t testing.TB) *Postgres {
	t.Skip("throwaway PostgreSQL clusters run on unix systems only")
	return nil
}

// Start does nothing here.
func (p *Postgres) Start() {}

// Stop does nothing here.
func (p *Postgres) Stop() {}

// Database is unused here.
func (p *Postgres) Database(name string) string { return "" }

// Dump is unused here.
func (p *Postgres) Dump(url string) []byte { return nil }

// Freeze does nothing here.
func (p *Postgres) Freeze() {}

// Thaw does nothing here.
func (p *Postgres) Thaw() {}

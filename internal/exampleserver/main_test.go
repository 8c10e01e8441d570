package exampleserver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: every
// session the example serves must end with its client (STYLE rule 10).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

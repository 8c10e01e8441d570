//go:build race

package testenv

// raceEnabled says the test binary is race-built: the binaries it runs are
// built with -race too.
const raceEnabled = true

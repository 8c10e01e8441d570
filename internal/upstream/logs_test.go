package upstream

import (
	"context"
	"log/slog"
	"testing"
)

// A session-era server that honours logging/setLevel has its messages
// filtered at each caller's level; once it sends one below the level it
// was asked for, it filters nothing, and its messages reach every caller
// as they would directly.
func TestServerThatSendsEveryLevel(t *testing.T) {
	c := &Conn{log: slog.New(slog.DiscardHandler)}
	if c.sendsEveryLevel("debug") {
		t.Fatal("a server asked for no level sends what it sends by default: nothing to learn from it")
	}
	c.logFloor.Store(int32(logRank["warning"]) + 1)
	for _, l := range []string{"warning", "error", "bogus"} {
		if c.sendsEveryLevel(l) {
			t.Fatalf("a %s message of a server asked for warning: taken for a server that filters nothing", l)
		}
	}
	if !c.sendsEveryLevel("info") {
		t.Fatal("an info message of a server asked for warning: the server filters nothing, yet its messages stay filtered")
	}
	if !c.sendsEveryLevel("error") {
		t.Fatal("a server seen sending every level is filtered again")
	}
	if !EveryLevel(withEveryLevel(context.Background(), true)) || EveryLevel(withEveryLevel(context.Background(), false)) {
		t.Fatal("the context does not carry the mark")
	}
}

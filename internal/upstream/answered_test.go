package upstream

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestServerAnsweredIsTheServers: an error answer is the server's — a
// known outcome — unless it is one the SDK or Plexus made itself; a
// server's own answer with Plexus's code (-32099, of the range servers
// share) is still the server's.
func TestServerAnsweredIsTheServers(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&jsonrpc.Error{Code: -32602, Message: "bad params"}, true},
		{fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32000, Message: "the server's own"}), true},
		{&jsonrpc.Error{Code: codeUnreadable, Message: "the server's own, with Plexus's code"}, true},
		{&jsonrpc.Error{Code: codeUnreadable, Message: unreadableMessage}, false},
		{fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}), false},
		{fmt.Errorf("no answer"), false},
		{nil, false},
	} {
		if got := serverAnswered(c.err); got != c.want {
			t.Errorf("serverAnswered(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

package upstream

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioConnReadEnds: the read loop of a server's stdout (raw reads on
// Linux, rawio) hands on the lines it reads, and tells why it ended: the
// connection closed here is no fault of the stream, nor is the server
// closing its stdout, which it reports as such.
func TestStdioConnReadEnds(t *testing.T) {
	for _, end := range []string{"close", "server"} {
		t.Run(end, func(t *testing.T) {
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			defer outW.Close()
			c := newStdioConn(pipes{stdin: inW, stdout: outR}, 0, func([]byte) {})
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := outW.WriteString(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"); err != nil {
				t.Fatal(err)
			}
			m, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := m.(*jsonrpc.Response); !ok || r.ID.Raw() != int64(7) {
				t.Fatalf("read %#v, want the answer to 7", m)
			}
			if end == "close" {
				c.Close()
			} else {
				outW.Close()
			}
			select {
			case <-c.readDone:
			case <-ctx.Done():
				t.Fatal("the read loop did not end")
			}
			if err := c.streamError(); err != nil {
				t.Errorf("streamError after the %s = %v, want none", end, err)
			}
			if got, want := c.stdoutClosed(), end == "server"; got != want {
				t.Errorf("stdoutClosed after the %s = %v, want %v", end, got, want)
			}
			if end == "close" && !errors.Is(c.readErr, mcp.ErrConnectionClosed) {
				t.Errorf("the read loop ended with %v, want mcp.ErrConnectionClosed", c.readErr)
			}
		})
	}
}

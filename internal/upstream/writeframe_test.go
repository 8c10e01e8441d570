package upstream

import (
	"context"
	"io"
	"os"
	"testing"
	"time"
)

// BenchmarkWriteFrame: one tools/call frame written to a server's stdin
// whose reader keeps up, with a context that can end (as a call's does).
func BenchmarkWriteFrame(b *testing.B) {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	c := newStdioConn(pipes{stdin: inW, stdout: outR}, 0, nil)
	b.Cleanup(func() { c.Close(); inR.Close(); outW.Close() })
	go io.Copy(io.Discard, inR)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	frame := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":3}}}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if err := c.writeFrame(ctx, frame, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

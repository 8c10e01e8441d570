//go:build unix

package mcpbridge

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPollableStdio: a bridge on blocking pipes (an editor's stdin and
// stdout) reads and writes through the runtime's poller, and leaves both
// pipes in blocking mode again when it ends.
func TestPollableStdio(t *testing.T) {
	var in, out [2]int
	if err := syscall.Pipe(in[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(out[:]); err != nil {
		t.Fatal(err)
	}
	inR, inW := os.NewFile(uintptr(in[0]), "in-r"), os.NewFile(uintptr(in[1]), "in-w")
	outR, outW := os.NewFile(uintptr(out[0]), "out-r"), os.NewFile(uintptr(out[1]), "out-w")
	defer inR.Close()
	defer outR.Close()
	srv := httptest.NewServer(quickFace{})
	defer srv.Close()
	b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp"}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), inR, outW) }()
	inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n")
	inW.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}` + "\n")
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, fd := range []int{in[0], out[1]} {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fl&unix.O_NONBLOCK != 0 {
			t.Errorf("fd %d left non-blocking", fd)
		}
	}
	outW.Close()
	got, _ := io.ReadAll(io.LimitReader(outR, 4096))
	if !bytes.Contains(got, []byte(`"id":1,"result":{"protocolVersion"`)) || !bytes.Contains(got, []byte(`"id":2,"result":{"content"`)) {
		t.Errorf("output %q, want the answers to both requests", got)
	}
}

//go:build linux

package rawio

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestFileReadEnds: a read of a pipe through File that waits for data
// ends as f's own would — with os.ErrDeadlineExceeded when f's deadline
// passes, os.ErrClosed when f is closed (the upstream's read loop tells a
// closed connection from a failed one by it), io.EOF when the writer
// closes — each as an *os.PathError naming f.
func TestFileReadEnds(t *testing.T) {
	for _, end := range []struct {
		name string
		do   func(r, w *os.File)
		want error
	}{
		{"deadline", func(r, _ *os.File) { r.SetReadDeadline(time.Now()) }, os.ErrDeadlineExceeded},
		{"close", func(r, _ *os.File) { r.Close() }, os.ErrClosed},
		{"eof", func(_, w *os.File) { w.Close() }, io.EOF},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		rr := File(r)
		if _, ok := rr.(*stream); !ok {
			t.Fatalf("File(os.Pipe's end) = %T, want a raw file", rr)
		}
		read := make(chan error, 1)
		go func() {
			_, err := rr.Read(make([]byte, 10))
			read <- err
		}()
		time.AfterFunc(50*time.Millisecond, func() { end.do(r, w) })
		select {
		case err := <-read:
			if !errors.Is(err, end.want) {
				t.Errorf("%s: read ended with %v, want %v", end.name, err, end.want)
			}
			var pe *os.PathError
			if end.want != io.EOF && (!errors.As(err, &pe) || pe.Path != r.Name()) {
				t.Errorf("%s: read ended with %#v, want an *os.PathError of %s", end.name, err, r.Name())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the read did not end", end.name)
		}
		r.Close()
		w.Close()
	}
}

// TestFileWriteToClosedReader: a write whose reader is gone fails with
// EPIPE, not a signal that ends the process, and a write to a closed file
// with os.ErrClosed.
func TestFileWriteToClosedReader(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := File(w).Write([]byte("x\n")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("write to a pipe without reader: %v, want EPIPE", err)
	}
	w.Close()
	if _, err := File(w).Write([]byte("x\n")); err == nil {
		t.Error("write to a closed file succeeded")
	}
	_, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fw := File(w2)
	w2.Close()
	if _, err := fw.Write([]byte("x\n")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("write after close: %v, want os.ErrClosed", err)
	}
}

// TestFileLeavesBlockingAlone: a descriptor in blocking mode is read as it
// is: a raw read of it would hold its thread in the kernel unseen by the
// scheduler.
func TestFileLeavesBlockingAlone(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	if got := File(r); got != io.ReadWriter(r) {
		t.Errorf("File(a blocking pipe) = %T, want the file itself", got)
	}
}

// TestWriteNow: WriteNow writes what the pipe takes and no more, without
// waiting, and nothing once the reader is gone.
func TestWriteNow(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if n := WriteNow(rc, []byte("hello\n")); n != 6 {
		t.Errorf("WriteNow of 6 bytes to an empty pipe wrote %d", n)
	}
	big := make([]byte, 4<<20) // more than a pipe holds
	done := make(chan int, 1)
	go func() { done <- WriteNow(rc, big) }()
	select {
	case n := <-done:
		if n <= 0 || n >= len(big) {
			t.Errorf("WriteNow of 4 MiB to a pipe wrote %d bytes, want what the pipe holds", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("WriteNow waited for the reader")
	}
	r.Close()
	if n := WriteNow(rc, []byte("x\n")); n != 0 {
		t.Errorf("WriteNow without a reader wrote %d bytes", n)
	}
}

// TestFileAllocatesNothing: a read and a write of a pipe through File
// allocate nothing (a closure handed to the poller at each one took two
// allocations: the daemon makes a handful of these a call).
func TestFileAllocatesNothing(t *testing.T) {
	if testenv.Race() {
		t.Skip("the race detector allocates of its own")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rr, ww := File(r), File(w)
	msg, buf := []byte("0123456789\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ww.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := rr.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a write and a read allocate %v times, want none", allocs)
	}
}

// TestNowWriterAllocatesNothing: a NowWriter's write allocates nothing
// (WriteNow's closure and its count took two allocations a frame written
// to a server's stdin).
func TestNowWriterAllocatesNothing(t *testing.T) {
	if testenv.Race() {
		t.Skip("the race detector allocates of its own")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	nw, rr := NewNowWriter(rc), File(r)
	msg, buf := []byte("0123456789\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if n := nw.Write(msg); n != len(msg) {
			t.Fatalf("wrote %d of %d bytes to an empty pipe", n, len(msg))
		}
		if _, err := rr.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a NowWriter's write allocates %v times, want none", allocs)
	}
}

//go:build linux

package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRawIOPipe: a message larger than a pipe holds goes whole through
// rawIO on a non-blocking pipe, its writer waiting in the poller while
// the reader is slow, and the reader then sees the end of the pipe.
func TestRawIOPipe(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := syscall.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: 16 pipe buffers
	wrote := make(chan error, 1)
	go func() {
		n, err := File(w).Write(msg)
		if err == nil && n != len(msg) {
			err = io.ErrShortWrite
		}
		w.Close()
		wrote <- err
	}()
	var got bytes.Buffer
	rr := File(r)
	buf := make([]byte, 7000)
	for {
		n, err := rr.Read(buf)
		got.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), msg) {
		t.Fatalf("read %d bytes, want the %d written", got.Len(), len(msg))
	}
}

// TestRawConnDeadline: a read of a connection through raw reads and writes that waits
// for an answer ends when the deadline is set to now (rawhttp cancels a
// request that way) and when the connection is closed.
func TestRawConnDeadline(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // answers nothing
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		rc := Conn(c)
		if _, ok := rc.(*conn); !ok {
			t.Fatalf("Conn(%T) = %T, want a raw conn", c, rc)
		}
		if _, err := rc.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	for _, end := range []struct {
		name string
		do   func(net.Conn)
		want error
	}{
		{"deadline", func(c net.Conn) { c.SetDeadline(time.Now()) }, os.ErrDeadlineExceeded},
		{"close", func(c net.Conn) { c.Close() }, net.ErrClosed},
	} {
		c := dial()
		read := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 10))
			read <- err
		}()
		time.AfterFunc(50*time.Millisecond, func() { end.do(c) })
		select {
		case err := <-read:
			if !errors.Is(err, end.want) {
				t.Errorf("%s: read ended with %v, want %v", end.name, err, end.want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the read did not end", end.name)
		}
		c.Close()
	}
}

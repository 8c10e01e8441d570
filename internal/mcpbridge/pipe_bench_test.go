//go:build unix

package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// editorPipe is a pipe whose end for the bridge (in: the read end) is in
// blocking mode, as an editor hands a server its stdin and stdout, and
// whose other end, the client's, is the runtime's poller's.
func editorPipe(b *testing.B, in bool) (r, w *os.File) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		b.Fatal(err)
	}
	client := fds[1]
	if !in {
		client = fds[0]
	}
	if err := syscall.SetNonblock(client, true); err != nil {
		b.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "pipe-r"), os.NewFile(uintptr(fds[1]), "pipe-w")
}

// BenchmarkBridgeCalls16 is a session-era client with 16 tools/call in
// flight through the bridge, on blocking pipes, to a face on a unix
// socket that answers at once. cpu-µs/op is the process's CPU time a
// call (the bridge's, the client's and the fake face's together).
func BenchmarkBridgeCalls16(b *testing.B) {
	sock := filepath.Join(b.TempDir(), "face.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: quickFace{}}
	go srv.Serve(ln)
	defer srv.Close()

	inR, inW := editorPipe(b, true)
	outR, outW := editorPipe(b, false)
	defer inW.Close()
	defer outR.Close()
	var d net.Dialer
	br := &Bridge{HTTP: &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", sock)
	}}}, URL: "http://face/mcp",
		Dial: func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", sock) }}
	done := make(chan error, 1)
	go func() {
		done <- br.Run(context.Background(), inR, outW)
		inR.Close()
		outW.Close()
	}()

	answers := bufio.NewScanner(outR)
	answers.Buffer(make([]byte, 64<<10), 1<<20)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if !answers.Scan() {
		b.Fatal("no answer to initialize", answers.Err())
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	const inFlight = 16
	slots := make(chan struct{}, inFlight)
	got := make(chan int, 1)
	go func() {
		n := 0
		for answers.Scan() {
			if !bytes.Contains(answers.Bytes(), []byte(`"result"`)) {
				panic("not a result: " + answers.Text())
			}
			n++
			<-slots
		}
		got <- n
	}()
	call := func(id int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) +
			`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}` + "\n")
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		slots <- struct{}{}
		if _, err := inW.Write(call(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
	for range inFlight {
		slots <- struct{}{}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if n := <-got; n != b.N {
		b.Fatalf("%d answers to %d calls", n, b.N)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

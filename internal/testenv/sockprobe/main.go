// Command sockprobe sends one HTTP request to a unix socket — the daemon's
// API, as a process that got hold of its path would — and reports the
// answer, for the tests of who the API admits. It is what a hostile
// server, or any other process of the user, can do with the socket.
//
//	sockprobe [-token-file PATH] [-out FILE] SOCKET METHOD PATH [BODY]
//
// It writes the status code and the body ("error: …" if the request got
// no answer) to FILE, or to stdout; with -token-file it sends the token
// in that file as the settings API's clients do. It exits 0 either way:
// the caller judges the answer.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	tokenFile := flag.String("token-file", "", "send the token in `PATH`")
	out := flag.String("out", "", "write the answer to `FILE` instead of stdout")
	flag.Parse()
	if flag.NArg() < 3 {
		fmt.Fprintln(os.Stderr, "usage: sockprobe [-token-file PATH] [-out FILE] SOCKET METHOD PATH [BODY]")
		os.Exit(2)
	}
	answer := probe(*tokenFile, flag.Arg(0), flag.Arg(1), flag.Arg(2), flag.Arg(3))
	if *out == "" {
		fmt.Println(answer)
		return
	}
	if err := os.WriteFile(*out, []byte(answer), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "sockprobe:", err)
		os.Exit(1)
	}
}

func probe(tokenFile, sock, method, path, body string) string {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	req, err := http.NewRequest(method, "http://plexus"+path, bytes.NewReader([]byte(body)))
	if err != nil {
		return "error: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tokenFile != "" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return "error: " + err.Error()
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}

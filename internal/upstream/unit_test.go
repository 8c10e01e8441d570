package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestSanitizeURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com/mcp?team=x&key=s3cret", "https://mcp.example.com/mcp?team=REDACTED&key=REDACTED"},
		{"https://user:pw@mcp.example.com/mcp#frag", "https://mcp.example.com/mcp"},
		{"http://127.0.0.1:8080/x?flag", "http://127.0.0.1:8080/x?flag"},
		{"http://[::1]:80/?a=1&a=2", "http://[::1]:80/?a=REDACTED&a=REDACTED"},
		{"://bad", "<invalid URL>"},
	} {
		if got := SanitizeURL(tc.in); got != tc.want {
			t.Errorf("SanitizeURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := newRedactor([]string{"abcd", "abcdefgh", ""}, "http://h/?k=abcd", "http://h/?k=REDACTED")
	if got := r.String("x abcdefgh y abcd z"); got != "x [redacted] y [redacted] z" {
		t.Errorf("got %q", got)
	}
	if got := r.String(`Post "http://h/?k=abcd": refused`); got != `Post "http://h/?k=REDACTED": refused` {
		t.Errorf("got %q", got)
	}
	base := errors.New("token abcd leaked")
	err := r.Error(base)
	if err.Error() != "token [redacted] leaked" || !errors.Is(err, base) {
		t.Errorf("Error = %v", err)
	}
}

// TestRedactorSkipsCommonValues: a managed value such as "1" or "true"
// is not cut out of every line that holds it.
func TestRedactorSkipsCommonValues(t *testing.T) {
	r := newRedactor([]string{"1", "true", "", " ", "on", "debug", "CANARY-s3cr3t"})
	in := "listening on port 1001 (debug=true): key CANARY-s3cr3t"
	want := "listening on port 1001 (debug=true): key [redacted]"
	if got := r.String(in); got != want {
		t.Errorf("String(%q) = %q, want %q", in, got, want)
	}
}

func TestReadStderrRingAndCut(t *testing.T) {
	secret := "SECRETSECRET"
	long := strings.Repeat("a", maxLineSize-4) + secret + strings.Repeat("b", 100)
	var in strings.Builder
	for i := range 250 {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	in.WriteString(long + "\nlast\r\n")
	ring := &lineRing{}
	readStderr(strings.NewReader(in.String()), ring, newRedactor([]string{secret}), slog.New(slog.DiscardHandler))
	lines := ring.snapshot()
	if len(lines) != ringLines {
		t.Fatalf("%d lines, want %d", len(lines), ringLines)
	}
	if lines[0] != "line 52" || lines[len(lines)-1] != "last" {
		t.Errorf("first %q, last %q", lines[0], lines[len(lines)-1])
	}
	cut := lines[len(lines)-2]
	if strings.Contains(cut, "SECRET") || !strings.HasSuffix(cut, " [cut]") || len(cut) > maxLineSize+len(" [cut]") {
		t.Errorf("long line not redacted and cut: ...%q (%d bytes)", cut[len(cut)-30:], len(cut))
	}
	if got := ring.last(2); len(got) != 2 || got[1] != "last" {
		t.Errorf("last(2) = %q", got)
	}
}

func TestListAllGuards(t *testing.T) {
	ctx := context.Background()
	got, err := listAll(ctx, func(cursor string) ([]int, string, error) {
		switch cursor {
		case "":
			return []int{1, 2}, "p2", nil
		case "p2":
			return []int{3}, "p3", nil
		}
		return []int{4}, "", nil
	})
	if err != nil || fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("listAll = %v, %v", got, err)
	}

	_, err = listAll(ctx, func(cursor string) ([]int, string, error) { return nil, "same", nil })
	if err == nil || !strings.Contains(err.Error(), `server repeated pagination cursor "same"`) {
		t.Errorf("repeated cursor: %v", err)
	}

	n := 0
	_, err = listAll(ctx, func(string) ([]int, string, error) { n++; return nil, fmt.Sprint(n), nil })
	if err == nil || !strings.Contains(err.Error(), "more than 1000 pages") {
		t.Errorf("endless pages: %v", err)
	}
}

func TestDecodeFrame(t *testing.T) {
	for _, tc := range []struct {
		line string
		n    int
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 1, true},
		{`  {"jsonrpc":"2.0","method":"notifications/x"}` + "\r\n", 1, true},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]`, 2, true},
		{`Server listening on stdio`, 0, false},
		{`{"level":"info","msg":"hi"}`, 0, false},
		{`[]`, 0, false},
		{``, 0, false},
	} {
		msgs, ok := decodeFrame([]byte(tc.line))
		if ok != tc.ok || (ok && len(msgs) != tc.n) {
			t.Errorf("decodeFrame(%q) = %d msgs, %v; want %d, %v", tc.line, len(msgs), ok, tc.n, tc.ok)
		}
	}
}

func TestReadFrameLimit(t *testing.T) {
	br := bufio.NewReaderSize(io.MultiReader(strings.NewReader("ok\n"), strings.NewReader(strings.Repeat("x", maxFrameSize+1))), 64<<10)
	if line, err := readFrame(br); err != nil || string(line) != "ok\n" {
		t.Fatalf("readFrame = %q, %v", line, err)
	}
	if _, err := readFrame(br); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized frame: %v", err)
	}
}

func TestCallErrorClassification(t *testing.T) {
	c := &Conn{redact: newRedactor(nil)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.callError(ctx, fmt.Errorf("x: %w", context.Canceled)); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTransportLost) {
		t.Errorf("cancelled: %v", err)
	}
	bg := context.Background()
	wire := fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32602, Message: "bad params"})
	if err := c.callError(bg, wire); errors.Is(err, ErrTransportLost) {
		t.Errorf("server error classified as lost: %v", err)
	}
	if err := c.callError(bg, io.EOF); !errors.Is(err, ErrTransportLost) || !errors.Is(err, io.EOF) {
		t.Errorf("EOF: %v", err)
	}
	rejected := fmt.Errorf("sending: %w: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, io.EOF)
	if err := c.callError(bg, rejected); !errors.Is(err, ErrTransportLost) {
		t.Errorf("cut-off POST: %v", err)
	}
	answered := fmt.Errorf("sending: %w: %w", &jsonrpc.Error{Code: -32000, Message: "quota"}, &jsonrpc.Error{Code: -32005})
	if err := c.callError(bg, answered); errors.Is(err, ErrTransportLost) {
		t.Errorf("error body of an HTTP error status classified as lost: %v", err)
	}
}

func TestStderrLogLimit(t *testing.T) {
	var buf logBuffer
	log := buf.logger()
	var l logLimiter
	t0 := time.Unix(1000, 0)
	logged := 0
	for i := range 500 {
		if l.allow(t0.Add(time.Duration(i)*time.Millisecond), log) {
			logged++
		}
	}
	if logged != stderrLogRate {
		t.Fatalf("%d lines logged in half a second, want %d", logged, stderrLogRate)
	}
	if !l.allow(t0.Add(1500*time.Millisecond), log) {
		t.Fatal("a line in the next second was refused")
	}
	if !strings.Contains(buf.String(), `"suppressed":450`) {
		t.Fatalf("no summary of the suppressed lines in the log: %s", buf.String())
	}
}

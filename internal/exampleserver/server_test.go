package exampleserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect starts the example server on in-memory transports and returns a
// connected client session. Cleanup closes the client and waits for the
// server to return.
func connect(t *testing.T, o options) *mcp.ClientSession {
	t.Helper()
	// Not t.Context(): that is cancelled before cleanups run, and the
	// cleanup checks that the server ends because the client left.
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := mcp.NewInMemoryTransports()
	var log bytes.Buffer
	o.log = &log
	done := make(chan error, 1)
	go func() { done <- run(ctx, serverT, o) }()

	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, clientT, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		defer cancel()
		cs.Close()
		select {
		case err := <-done:
			// A client going away is how a session normally ends.
			if err != nil {
				t.Errorf("run returned %v after the client disconnected, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not return after the client disconnected")
		}
		// One ready line; besides it only the sleeps it reports.
		got := log.String()
		if strings.Count(got, "\n")-strings.Count(got, `msg="sleep cancelled"`)-strings.Count(got, `msg="sleep started"`) != 1 || !strings.Contains(got, "plexus example server ready") {
			t.Errorf("log = %q, want one ready line", got)
		}
	})
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d content items", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content is %T", tool, res.Content[0])
	}
	return tc.Text, res.IsError
}

func TestListings(t *testing.T) {
	cs := connect(t, options{})
	if got := cs.InitializeResult().ServerInfo; got.Name != "plexus-example" || got.Version != "1.0.0" {
		t.Errorf("server info = %+v", got)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"ask", "echo", "now", "roots", "sha256", "sleep"}; !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
}

func TestTools(t *testing.T) {
	cs := connect(t, options{})
	sum := sha256.Sum256([]byte("héllo"))
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		want    string // exact text, unless check is set
		check   func(string) bool
		wantErr bool
	}{
		{name: "echo", tool: "echo", args: map[string]any{"text": "  hello\n<b>world</b> ✓ "}, want: "  hello\n<b>world</b> ✓ "},
		{name: "echo empty", tool: "echo", args: map[string]any{"text": ""}, want: ""},
		{name: "echo without text", tool: "echo", args: map[string]any{}, wantErr: true},
		{name: "sha256", tool: "sha256", args: map[string]any{"text": "héllo"}, want: hex.EncodeToString(sum[:])},
		{name: "sha256 empty", tool: "sha256", args: map[string]any{"text": ""},
			want: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "now UTC", tool: "now", args: map[string]any{}, check: func(s string) bool {
			tm, err := time.Parse(time.RFC3339, s)
			return err == nil && strings.HasSuffix(s, "Z") && time.Since(tm).Abs() < time.Minute
		}},
		{name: "now in a zone", tool: "now", args: map[string]any{"timezone": "Asia/Kolkata"}, check: func(s string) bool {
			_, err := time.Parse(time.RFC3339, s)
			return err == nil && strings.HasSuffix(s, "+05:30")
		}},
		{name: "now bad zone", tool: "now", args: map[string]any{"timezone": "Mars/Olympus_Mons"}, check: func(s string) bool {
			return strings.Contains(s, `unknown time zone "Mars/Olympus_Mons"`)
		}, wantErr: true},
		{name: "now path-like zone", tool: "now", args: map[string]any{"timezone": "../../etc/passwd"}, check: func(s string) bool {
			return strings.Contains(s, "unknown time zone")
		}, wantErr: true},
		{name: "sleep", tool: "sleep", args: map[string]any{"ms": 20}, want: "slept 20 ms"},
		{name: "sleep zero", tool: "sleep", args: map[string]any{"ms": 0}, want: "slept 0 ms"},
		{name: "sleep too long", tool: "sleep", args: map[string]any{"ms": 600001}, wantErr: true},
		{name: "sleep negative", tool: "sleep", args: map[string]any{"ms": -1}, wantErr: true},
		{name: "sleep fraction", tool: "sleep", args: map[string]any{"ms": 1.5}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := callText(t, cs, tt.tool, tt.args)
			if isErr != tt.wantErr {
				t.Errorf("IsError = %v, want %v (text %q)", isErr, tt.wantErr, got)
			}
			switch {
			case tt.check != nil:
				if !tt.check(got) {
					t.Errorf("text = %q", got)
				}
			case !tt.wantErr && got != tt.want:
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSleepCancelled runs in a synctest bubble: the ten-minute sleep and
// the waits below take no real time, and the cancel comes exactly when the
// call is in the handler.
func TestSleepCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		returned := make(chan error, 1)
		cs := connect(t, options{sleepReturned: func(err error) { returned <- err }})

		ctx, cancel := context.WithCancel(t.Context())
		callDone := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 600000}})
			callDone <- err
		}()
		// Cancel once the call is in flight, so that the handler itself must
		// notice: in the bubble, every goroutine blocked means the call has
		// arrived and the handler waits on its timer.
		synctest.Wait()
		cancel()

		select {
		case err := <-callDone:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("call error = %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("call did not return after cancel")
		}
		select {
		case err := <-returned:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("handler returned with ctx error %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("sleep handler still running after cancel")
		}

		// The server goes on serving.
		if got, _ := callText(t, cs, "echo", map[string]any{"text": "still here"}); got != "still here" {
			t.Errorf("echo after cancel = %q", got)
		}
	})
}

func TestReadme(t *testing.T) {
	cs := connect(t, options{})
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != "plexus://example/readme" || list.Resources[0].MIMEType != "text/markdown" {
		t.Fatalf("resources = %+v", list.Resources)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "plexus://example/readme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%d contents", len(res.Contents))
	}
	c := res.Contents[0]
	if c.URI != "plexus://example/readme" || c.MIMEType != "text/markdown" || !strings.Contains(c.Text, "Plexus example server") {
		t.Errorf("contents = %+v", c)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "plexus://example/nope"}); err == nil {
		t.Error("reading an unknown resource succeeded")
	}
}

func TestSummarizePrompt(t *testing.T) {
	cs := connect(t, options{})
	list, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "summarize" ||
		len(list.Prompts[0].Arguments) != 1 || !list.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts = %+v", list.Prompts)
	}
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "summarize", Arguments: map[string]string{"text": "The cat sat."}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("messages = %+v", res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok || !strings.Contains(tc.Text, "summarize") || !strings.HasSuffix(tc.Text, "The cat sat.") {
		t.Errorf("message = %+v", res.Messages[0].Content)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "summarize"}); err == nil || !strings.Contains(err.Error(), `"text"`) {
		t.Errorf("missing argument: err = %v", err)
	}
}

func TestRunStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	serverT, clientT := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- run(ctx, serverT, options{log: &bytes.Buffer{}}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

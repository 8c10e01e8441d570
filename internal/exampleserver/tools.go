package exampleserver

//lint:file-ignore SA1019 the example server asks for roots, deprecated but still in the protocol, to show that Plexus relays them.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"
	// Embedded zone data: the example must answer "now" for any IANA zone
	// even on systems without /usr/share/zoneinfo (Windows, minimal
	// containers), since the quickstart promises to work offline anywhere.
	_ "time/tzdata"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSleepMS bounds sleep at ten minutes: long enough to outlast any sensible
// call timeout, short enough that a forgotten call ends by itself.
const maxSleepMS = 600_000

type textInput struct {
	Text string `json:"text" jsonschema:"the text"`
}

type nowInput struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA time zone name such as Europe/Paris; default UTC"`
}

type sleepInput struct {
	MS int `json:"ms"`
}

// sleepSchema is written out because the SDK infers types from Go structs but
// not bounds, and the bounds belong in the schema where a client can see
// them; the SDK validates arguments against it before the handler runs.
var sleepSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"ms": {"type": "integer", "minimum": 0, "maximum": 600000, "description": "how long to sleep, in milliseconds"}
	},
	"required": ["ms"],
	"additionalProperties": false
}`)

func addTools(s *mcp.Server, o options, log *slog.Logger) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Return the given text unchanged.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, echo)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "sha256",
		Description: "Return the SHA-256 digest of the given text (UTF-8), in lowercase hex.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, hashText)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "now",
		Description: "Return the current time in RFC 3339 format, in the given IANA time zone (UTC by default).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, now)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "sleep",
		Description: "Wait the given number of milliseconds (at most 600000), then say so. Returns early if the call is cancelled; useful to try timeouts and cancellation.",
		InputSchema: sleepSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, sleeper(func(ms int) {
		// On stderr too, so that people (and tests) see a sleep arrive at
		// the server: a call in flight, not only a client waiting.
		log.Info("sleep started", "ms", ms)
	}, func(err error) {
		if err != nil {
			// On stderr, so that people (and tests) see a cancellation
			// arrive: the server stopped, not only the client's wait.
			log.Info("sleep cancelled", "err", err)
		}
		if o.sleepReturned != nil {
			o.sleepReturned(err)
		}
	}))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask",
		Description: "Ask the user a question (elicitation) and return their answer; useful to try how a client answers a server's questions.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, ask)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "roots",
		Description: "List the client's roots (the folders it offers); useful to try how roots reach a server.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, roots)
}

// roots asks the client for its roots as a multi-round-trip result, like
// ask; for an older client the SDK sends roots/list on the session.
func roots(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
	if !ok || r == nil {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
	}
	var b strings.Builder
	for _, root := range r.Roots {
		fmt.Fprintf(&b, "%s\n", root.URI)
	}
	return text(strings.TrimSpace(b.String())), nil, nil
}

type askInput struct {
	Question string `json:"question" jsonschema:"the question to put to the user"`
}

// answerSchema is what ask requests: one string.
var answerSchema = &jsonschema.Schema{Type: "object",
	Properties: map[string]*jsonschema.Schema{"answer": {Type: "string", Description: "your answer"}},
	Required:   []string{"answer"}}

// ask elicits an answer as a multi-round-trip (input_required) result: a
// 2026-07-28 client answers it and calls again; for an older client the
// SDK sends elicitation/create on the session and calls again itself.
func ask(_ context.Context, req *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, any, error) {
	if r, ok := req.Params.InputResponses["answer"].(*mcp.ElicitResult); ok && r != nil {
		if r.Action != "accept" {
			return text("the user chose to " + r.Action), nil, nil
		}
		a, _ := r.Content["answer"].(string)
		return text("answer: " + a), nil, nil
	}
	q := in.Question
	if q == "" {
		q = "What is your answer?"
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		"answer": &mcp.ElicitParams{Message: q, RequestedSchema: answerSchema},
	}}, nil, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in textInput) (*mcp.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

func hashText(_ context.Context, _ *mcp.CallToolRequest, in textInput) (*mcp.CallToolResult, any, error) {
	sum := sha256.Sum256([]byte(in.Text))
	return text(hex.EncodeToString(sum[:])), nil, nil
}

// now returns a tool error (IsError), not a protocol error, for an unknown
// zone: the input was the model's mistake, and the model should see it and
// retry.
func now(_ context.Context, _ *mcp.CallToolRequest, in nowInput) (*mcp.CallToolResult, any, error) {
	loc := time.UTC
	if in.Timezone != "" {
		var err error
		if loc, err = time.LoadLocation(in.Timezone); err != nil {
			return nil, nil, fmt.Errorf("unknown time zone %q: use an IANA name such as Europe/Paris or America/New_York", in.Timezone)
		}
	}
	return text(time.Now().In(loc).Format(time.RFC3339)), nil, nil
}

func sleeper(started func(ms int), returned func(error)) mcp.ToolHandlerFor[sleepInput, any] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in sleepInput) (_ *mcp.CallToolResult, _ any, err error) {
		if returned != nil {
			defer func() { returned(ctx.Err()) }()
		}
		// The schema already bounds ms; this guards the handler should it
		// ever be reached another way.
		if in.MS < 0 || in.MS > maxSleepMS {
			return nil, nil, fmt.Errorf("ms must be between 0 and %d, not %d", maxSleepMS, in.MS)
		}
		started(in.MS)
		t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return text(fmt.Sprintf("slept %d ms", in.MS)), nil, nil
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("sleep cancelled: %w", ctx.Err())
		}
	}
}

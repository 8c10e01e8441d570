//lint:file-ignore SA1019 the peer matrix exercises what MCP 2026-07-28 deprecates (sampling, roots, logging, ping) because session-era peers still use it, through the deprecation window.

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The matrix's Go clients: the official go-sdk's and mcp-go's, each as a
// peerSession.

// peerEndpoint is where a client connects: a command it runs (stdio), or
// a streamable HTTP or legacy SSE URL, with a bearer token for the face.
type peerEndpoint struct {
	kind    string   // "stdio", "http" or "sse"
	url     string   // http, sse
	token   string   // the face's bearer token, if any
	command []string // stdio
	env     []string // stdio: added to the environment
}

func (e peerEndpoint) httpClient() *http.Client {
	if e.token == "" {
		return http.DefaultClient
	}
	return &http.Client{Transport: bearer{token: e.token}}
}

// connectGoSDK opens a go-sdk client session on e in era ("2026-07-28" or
// "2025-11-25"); ctx bounds the session's life.
func connectGoSDK(ctx context.Context, e peerEndpoint, era string) (peerSession, error) {
	s := &goSDKSession{}
	var progressFn atomic.Pointer[func(p, total float64)]
	s.progress = &progressFn
	c := mcp.NewClient(&mcp.Implementation{Name: "matrix-gosdk", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": answerName}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: answerModel, Content: &mcp.TextContent{Text: answerText}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			s.sink.add(string(r.Params.Level), r.Params.Data)
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if f := progressFn.Load(); f != nil {
				(*f)(r.Params.Progress, r.Params.Total)
			}
		},
	})
	c.AddRoots(&mcp.Root{URI: answerRoot, Name: "peer"})
	var t mcp.Transport
	switch e.kind {
	case "stdio":
		cmd := exec.Command(e.command[0], e.command[1:]...)
		cmd.Env = append(cmd.Environ(), e.env...)
		t = &mcp.CommandTransport{Command: cmd}
	case "http":
		t = &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: e.httpClient()}
	case "sse":
		t = &mcp.SSEClientTransport{Endpoint: e.url, HTTPClient: e.httpClient()}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, err := c.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		return nil, err
	}
	s.cs = cs
	return s, nil
}

type goSDKSession struct {
	cs       *mcp.ClientSession
	sink     logSink
	progress *atomic.Pointer[func(p, total float64)]
	tokens   atomic.Int64
}

func (s *goSDKSession) lists(ctx context.Context) string {
	out := map[string]any{}
	if r, err := s.cs.ListTools(ctx, nil); err != nil {
		out["tools"] = errText(err)
	} else {
		out["tools"] = r.Tools
	}
	if r, err := s.cs.ListResources(ctx, nil); err != nil {
		out["resources"] = errText(err)
	} else {
		out["resources"] = r.Resources
	}
	if r, err := s.cs.ListResourceTemplates(ctx, nil); err != nil {
		out["templates"] = errText(err)
	} else {
		out["templates"] = r.ResourceTemplates
	}
	if r, err := s.cs.ListPrompts(ctx, nil); err != nil {
		out["prompts"] = errText(err)
	} else {
		out["prompts"] = r.Prompts
	}
	return canonicalJSON(out)
}

func (s *goSDKSession) call(ctx context.Context, name string, args map[string]any, progress func(p, total float64)) (string, error) {
	p := &mcp.CallToolParams{Name: name}
	if args != nil {
		p.Arguments = args
	}
	if progress != nil {
		p.SetProgressToken(fmt.Sprintf("tok-%d", s.tokens.Add(1)))
		s.progress.Store(&progress)
		defer s.progress.Store(nil)
	}
	r, err := s.cs.CallTool(ctx, p)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if r.IsError {
		b.WriteString("isError: ")
	}
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		} else {
			b.WriteString(canonicalJSON(c))
		}
	}
	return b.String(), nil
}

func (s *goSDKSession) read(ctx context.Context, uri string) (string, error) {
	r, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, c := range r.Contents {
		parts = append(parts, c.URI+" "+c.MIMEType+" "+c.Text)
	}
	return strings.Join(parts, "; "), nil
}

func (s *goSDKSession) prompt(ctx context.Context, name string, args map[string]string) (string, error) {
	r, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, string(m.Role)+": "+canonicalJSON(m.Content))
	}
	return strings.Join(parts, "; "), nil
}

func (s *goSDKSession) complete(ctx context.Context, prompt, arg, value string) (string, error) {
	r, err := s.cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
		Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
	})
	if err != nil {
		return "", err
	}
	return strings.Join(r.Completion.Values, ","), nil
}

func (s *goSDKSession) setLevel(ctx context.Context, level string) error {
	return s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)})
}

func (s *goSDKSession) ping(ctx context.Context) error { return s.cs.Ping(ctx, nil) }
func (s *goSDKSession) logs() []string                 { return s.sink.take() }
func (s *goSDKSession) close()                         { s.cs.Close() }

// connectMCPGo opens an mcp-go client session on e in era; ctx bounds the
// session's life (mcp-go's transports keep it for their streams and the
// command they run).
func connectMCPGo(ctx context.Context, e peerEndpoint, era string) (peerSession, error) {
	var t mcpgotransport.Interface
	switch e.kind {
	case "stdio":
		t = mcpgotransport.NewStdio(e.command[0], e.env, e.command[1:]...)
	case "http":
		var opts []mcpgotransport.StreamableHTTPCOption
		if e.token != "" {
			opts = append(opts, mcpgotransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + e.token}))
		}
		ht, err := mcpgotransport.NewStreamableHTTP(e.url, opts...)
		if err != nil {
			return nil, err
		}
		t = ht
	case "sse":
		var opts []mcpgotransport.ClientOption
		if e.token != "" {
			opts = append(opts, mcpgotransport.WithHeaders(map[string]string{"Authorization": "Bearer " + e.token}))
		}
		st, err := mcpgotransport.NewSSE(e.url, opts...)
		if err != nil {
			return nil, err
		}
		t = st
	}
	s := &mcpGoSession{}
	c := mcpgoclient.NewClient(t,
		mcpgoclient.WithElicitationHandler(mcpGoAnswers{}),
		mcpgoclient.WithSamplingHandler(mcpGoAnswers{}),
		mcpgoclient.WithRootsHandler(mcpGoAnswers{}),
		mcpgoclient.WithProtocolVersion(era))
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		f := n.Params.AdditionalFields
		switch n.Method {
		case "notifications/message":
			s.sink.add(fmt.Sprint(f["level"]), f["data"])
		case "notifications/progress":
			if p := s.progress.Load(); p != nil {
				pv, _ := f["progress"].(float64)
				tv, _ := f["total"].(float64)
				(*p)(pv, tv)
			}
		}
	})
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = era
	req.Params.ClientInfo = mcpgo.Implementation{Name: "matrix-mcpgo", Version: "1"}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ictx, req); err != nil {
		c.Close()
		return nil, err
	}
	s.c = c
	return s, nil
}

// mcpGoAnswers answers the server's questions as every matrix client does.
type mcpGoAnswers struct{}

func (mcpGoAnswers) Elicit(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"name": answerName}}}, nil
}

func (mcpGoAnswers) CreateMessage(context.Context, mcpgo.CreateMessageRequest) (*mcpgo.CreateMessageResult, error) {
	return &mcpgo.CreateMessageResult{Model: answerModel, SamplingMessage: mcpgo.SamplingMessage{Role: mcpgo.RoleAssistant, Content: mcpgo.NewTextContent(answerText)}}, nil
}

func (mcpGoAnswers) ListRoots(context.Context, mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	return &mcpgo.ListRootsResult{Roots: []mcpgo.Root{{URI: answerRoot, Name: "peer"}}}, nil
}

type mcpGoSession struct {
	c        *mcpgoclient.Client
	sink     logSink
	progress atomic.Pointer[func(p, total float64)]
	tokens   atomic.Int64
}

func (s *mcpGoSession) lists(ctx context.Context) string {
	out := map[string]any{}
	if r, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{}); err != nil {
		out["tools"] = errText(err)
	} else {
		out["tools"] = r.Tools
	}
	if r, err := s.c.ListResources(ctx, mcpgo.ListResourcesRequest{}); err != nil {
		out["resources"] = errText(err)
	} else {
		out["resources"] = r.Resources
	}
	if r, err := s.c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{}); err != nil {
		out["templates"] = errText(err)
	} else {
		out["templates"] = r.ResourceTemplates
	}
	if r, err := s.c.ListPrompts(ctx, mcpgo.ListPromptsRequest{}); err != nil {
		out["prompts"] = errText(err)
	} else {
		out["prompts"] = r.Prompts
	}
	return canonicalJSON(out)
}

func (s *mcpGoSession) call(ctx context.Context, name string, args map[string]any, progress func(p, total float64)) (string, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	if args != nil {
		req.Params.Arguments = args
	}
	if progress != nil {
		req.Params.Meta = &mcpgo.Meta{ProgressToken: fmt.Sprintf("tok-%d", s.tokens.Add(1))}
		s.progress.Store(&progress)
		defer s.progress.Store(nil)
	}
	r, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if r.IsError {
		b.WriteString("isError: ")
	}
	for _, c := range r.Content {
		if t, ok := c.(mcpgo.TextContent); ok {
			b.WriteString(t.Text)
		} else {
			b.WriteString(canonicalJSON(c))
		}
	}
	return b.String(), nil
}

func (s *mcpGoSession) read(ctx context.Context, uri string) (string, error) {
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	r, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, c := range r.Contents {
		if t, ok := c.(mcpgo.TextResourceContents); ok {
			parts = append(parts, t.URI+" "+t.MIMEType+" "+t.Text)
		} else {
			parts = append(parts, canonicalJSON(c))
		}
	}
	return strings.Join(parts, "; "), nil
}

func (s *mcpGoSession) prompt(ctx context.Context, name string, args map[string]string) (string, error) {
	req := mcpgo.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	r, err := s.c.GetPrompt(ctx, req)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, string(m.Role)+": "+canonicalJSON(m.Content))
	}
	return strings.Join(parts, "; "), nil
}

func (s *mcpGoSession) complete(ctx context.Context, prompt, arg, value string) (string, error) {
	req := mcpgo.CompleteRequest{}
	req.Params.Ref = mcpgo.PromptReference{Type: "ref/prompt", Name: prompt}
	req.Params.Argument = mcpgo.CompleteArgument{Name: arg, Value: value}
	r, err := s.c.Complete(ctx, req)
	if err != nil {
		return "", err
	}
	return strings.Join(r.Completion.Values, ","), nil
}

func (s *mcpGoSession) setLevel(ctx context.Context, level string) error {
	req := mcpgo.SetLevelRequest{}
	req.Params.Level = mcpgo.LoggingLevel(level)
	return s.c.SetLevel(ctx, req)
}

func (s *mcpGoSession) ping(ctx context.Context) error { return s.c.Ping(ctx) }
func (s *mcpGoSession) logs() []string                 { return s.sink.take() }
func (s *mcpGoSession) close()                         { s.c.Close() }

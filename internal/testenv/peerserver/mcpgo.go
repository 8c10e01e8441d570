//lint:file-ignore SA1019 the peer matrix exercises what MCP 2026-07-28 deprecates (sampling, roots, logging, ping) because session-era peers still use it, through the deprecation window.

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// serveMCPGo serves the set on github.com/mark3labs/mcp-go.
func serveMCPGo(transport, addr string) error {
	s := mcpGoServer()
	switch transport {
	case "stdio":
		return server.ServeStdio(s)
	case "http", "stateless":
		return listen(addr, "/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(transport == "stateless")))
	case "sse":
		// The SSE server serves its stream at /sse and takes messages at
		// /message: every path goes to it.
		return serve(addr, "/sse", server.NewSSEServer(s))
	}
	return fmt.Errorf("the mcp-go peer has no transport %q", transport)
}

type mcpGoCompletions struct{}

func (mcpGoCompletions) CompletePromptArgument(_ context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: orEmpty(complete(arg.Value))}, nil
}

func mcpGoServer() *server.MCPServer {
	s := server.NewMCPServer("peer-mcpgo", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(mcpGoCompletions{}),
		server.WithLogging(),
		server.WithElicitation(),
		server.WithRoots(),
	)
	s.EnableSampling()
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its text."), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("hello", mcp.WithDescription("Says hello; takes no arguments.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello"), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Reports progress while it waits; cancellable."),
		mcp.WithString("key"), mcp.WithNumber("steps"), mcp.WithNumber("ms")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key, steps, ms := req.GetString("key", ""), req.GetInt("steps", 1), req.GetInt("ms", 0)
			setSlow(key, "running")
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			for i := 1; i <= steps; i++ {
				if token != nil {
					s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
						"progressToken": token, "progress": i, "total": steps,
					})
				}
				select {
				case <-ctx.Done():
					setSlow(key, "cancelled")
					return nil, ctx.Err()
				case <-time.After(time.Duration(ms) * time.Millisecond):
				}
			}
			setSlow(key, "done")
			return mcp.NewToolResultText(fmt.Sprintf("slow done: %d", steps)), nil
		})
	s.AddTool(mcp.NewTool("slow_status", mcp.WithDescription("What slow noted under key."), mcp.WithString("key")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(slowState(req.GetString("key", ""))), nil
		})
	s.AddTool(mcp.NewTool("log", mcp.WithDescription("Logs one message per level.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range logLevels {
				s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevel(l), logger, "log "+l))
			}
			return mcp.NewToolResultText("logged"), nil
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Asks the client (input_required; both eras)."), mcp.WithString("kind")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			kind := req.GetString("kind", "")
			if _, ok := server.InputResponse(req.Params.InputResponses, "q"); ok {
				switch kind {
				case "elicitation":
					return mcp.NewToolResultText(mcpGoElicitText(server.ElicitationResponse(req.Params.InputResponses, "q"))), nil
				case "sampling":
					return mcp.NewToolResultText(mcpGoSampleText(server.SamplingResponse(req.Params.InputResponses, "q"))), nil
				case "roots":
					return mcp.NewToolResultText(mcpGoRootsText(server.RootsResponse(req.Params.InputResponses, "q"))), nil
				}
			}
			b := server.NewInputRequestBuilder("")
			switch kind {
			case "elicitation":
				b.Elicit("q", mcpGoElicit())
			case "sampling":
				b.Sample("q", mcpGoSample())
			case "roots":
				b.Roots("q")
			default:
				return mcp.NewToolResultError("unknown kind " + kind), nil
			}
			return b.ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("ask_legacy", mcp.WithDescription("Asks the client on the session (session era)."), mcp.WithString("kind")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var text string
			switch kind := req.GetString("kind", ""); kind {
			case "elicitation":
				r, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcpGoElicit()})
				if err != nil {
					return nil, err
				}
				text = mcpGoElicitText(r)
			case "sampling":
				r, err := s.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcpGoSample()})
				if err != nil {
					return nil, err
				}
				text = mcpGoSampleText(r)
			case "roots":
				r, err := s.RequestRoots(ctx, mcp.ListRootsRequest{})
				if err != nil {
					return nil, err
				}
				text = mcpGoRootsText(r)
			default:
				return mcp.NewToolResultError("unknown kind " + kind), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	s.AddResource(mcp.NewResource(staticURI, "static", mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: staticURI, MIMEType: "text/plain", Text: staticText}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate(itemTemplate, "item", mcp.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + itemID(req.Params.URI)}}, nil
		})
	s.AddPrompt(mcp.NewPrompt(promptName, mcp.WithPromptDescription("Greets someone."), mcp.WithArgument("name", mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("Hello, " + req.Params.Arguments["name"] + "!")}}}, nil
		})
	return s
}

func mcpGoElicit() mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: elicitMessage, RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
	}}
}

func mcpGoSample() mcp.CreateMessageParams {
	return mcp.CreateMessageParams{MaxTokens: 20, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(samplePrompt)}}}
}

func mcpGoElicitText(r *mcp.ElicitationResult) string {
	if r == nil {
		return "elicitation: no answer"
	}
	content, _ := r.Content.(map[string]any)
	return elicitText(string(r.Action), content)
}

func mcpGoSampleText(r *mcp.CreateMessageResult) string {
	if r == nil {
		return "sampling: no answer"
	}
	return sampleText(textOf(r.Content), r.Model)
}

func mcpGoRootsText(r *mcp.ListRootsResult) string {
	if r == nil {
		return "roots: no answer"
	}
	var uris []string
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return rootsText(uris)
}

//lint:file-ignore SA1019 the peer matrix exercises what MCP 2026-07-28 deprecates (sampling, roots, logging, ping) because session-era peers still use it, through the deprecation window.

package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveGoSDK serves the set on the official go-sdk.
func serveGoSDK(transport, addr string) error {
	newServer := func() *mcp.Server { return goSDKServer() }
	switch transport {
	case "stdio":
		return newServer().Run(context.Background(), &mcp.StdioTransport{})
	case "http", "stateless":
		one := newServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return one },
			&mcp.StreamableHTTPOptions{Stateless: transport == "stateless"})
		return listen(addr, "/mcp", h)
	case "sse":
		one := newServer()
		return serve(addr, "/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return one }, nil))
	}
	return fmt.Errorf("the go-sdk peer has no transport %q", transport)
}

// listen serves h at path on addr (only there: 404 elsewhere).
func listen(addr, path string, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle(path, h)
	return serve(addr, path, mux)
}

// serve serves h on addr, saying it serves path.
func serve(addr, path string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("peerserver listening on http://%s%s", ln.Addr(), path)
	return http.Serve(ln, h)
}

func goSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "peer-gosdk", Version: "1.0.0"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: orEmpty(complete(req.Params.Argument.Value))}}, nil
		},
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Completions: &mcp.CompletionCapabilities{}},
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("echo: " + in.Text), nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "hello", Description: "Says hello; takes no arguments.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("hello"), nil })
	type slowIn struct {
		Key   string `json:"key"`
		Steps int    `json:"steps"`
		MS    int    `json:"ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Reports progress while it waits; cancellable."}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		setSlow(in.Key, "running")
		token := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			if token != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps)})
			}
			select {
			case <-ctx.Done():
				setSlow(in.Key, "cancelled")
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			}
		}
		setSlow(in.Key, "done")
		return text(fmt.Sprintf("slow done: %d", in.Steps)), nil, nil
	})
	type keyIn struct {
		Key string `json:"key"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow_status", Description: "What slow noted under key."}, func(_ context.Context, _ *mcp.CallToolRequest, in keyIn) (*mcp.CallToolResult, any, error) {
		return text(slowState(in.Key)), nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "log", Description: "Logs one message per level.", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range logLevels {
				req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(l), Logger: logger, Data: "log " + l})
			}
			return text("logged"), nil
		})
	type askIn struct {
		Kind string `json:"kind"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the client (input_required; both eras)."}, func(_ context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		if got, ok := req.Params.InputResponses["q"]; ok {
			return text(goSDKAnswer(got)), nil, nil
		}
		var q mcp.InputRequest
		switch in.Kind {
		case "elicitation":
			q = goSDKElicit()
		case "sampling":
			q = goSDKSample()
		case "roots":
			q = &mcp.ListRootsParams{}
		default:
			return nil, nil, fmt.Errorf("unknown kind %q", in.Kind)
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": q}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask_legacy", Description: "Asks the client on the session (session era)."}, func(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		var got mcp.InputResponse
		var err error
		switch in.Kind {
		case "elicitation":
			got, err = req.Session.Elicit(ctx, goSDKElicit())
		case "sampling":
			got, err = req.Session.CreateMessage(ctx, goSDKSample())
		case "roots":
			got, err = req.Session.ListRoots(ctx, &mcp.ListRootsParams{})
		default:
			err = fmt.Errorf("unknown kind %q", in.Kind)
		}
		if err != nil {
			return nil, nil, err
		}
		return text(goSDKAnswer(got)), nil, nil
	})
	s.AddResource(&mcp.Resource{URI: staticURI, Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: staticURI, MIMEType: "text/plain", Text: staticText}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: itemTemplate, Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + itemID(req.Params.URI)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: promptName, Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}}}}, nil
		})
	return s
}

func goSDKElicit() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: elicitMessage, RequestedSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"},
	}}
}

func goSDKSample() *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: 20, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: samplePrompt}}}}
}

// goSDKAnswer renders a client's answer to one of ask's questions.
func goSDKAnswer(r mcp.InputResponse) string {
	switch r := r.(type) {
	case *mcp.ElicitResult:
		return elicitText(r.Action, r.Content)
	case *mcp.CreateMessageResult:
		return sampleText(textOf(r.Content), r.Model)
	case *mcp.CreateMessageWithToolsResult:
		return sampleText(textOf(r.Content), r.Model)
	case *mcp.ListRootsResult:
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return rootsText(uris)
	}
	return fmt.Sprintf("unexpected answer %T", r)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

package exampleserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const readmeURI = "plexus://example/readme"

const readme = `# Plexus example server

This is the MCP server built into Plexus. It needs no network and no
configuration, so you can try Plexus before adding real servers.

Tools:

- echo: returns the text you give it.
- sha256: returns the SHA-256 digest of a text, in hex.
- now: returns the current time in an IANA time zone (UTC by default).
- sleep: waits up to ten minutes; cancel the call or let it time out to see
  how Plexus handles both.

It also offers this resource and a "summarize" prompt.
`

func addReadme(s *mcp.Server) {
	s.AddResource(&mcp.Resource{
		URI:         readmeURI,
		Name:        "readme",
		Title:       "About the Plexus example server",
		Description: "What this server is and what it offers.",
		MIMEType:    "text/markdown",
		Size:        int64(len(readme)),
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: readmeURI, MIMEType: "text/markdown", Text: readme},
		}}, nil
	})
}

func addSummarize(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{
		Name:        "summarize",
		Title:       "Summarize",
		Description: "Ask the model to summarize a text.",
		Arguments:   []*mcp.PromptArgument{{Name: "text", Description: "the text to summarize", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text, ok := req.Params.Arguments["text"]
		// The SDK does not enforce required prompt arguments. The MCP spec
		// lists "Missing required arguments" under -32602 (Invalid params).
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `prompt "summarize" needs the argument "text"`}
		}
		return &mcp.GetPromptResult{
			Description: "Summarize a text.",
			Messages: []*mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: "Please summarize the following text in a few sentences.\n\n" + text},
			}},
		}, nil
	})
}

package face

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
)

var emptySchema = map[string]any{"type": "object", "properties": map[string]any{}}

// addControlTools offers plexus_status and plexus_snapshot (R-FACE-2).
func (p *profile) addControlTools() {
	h := p.f.h
	p.addTool(&mcp.Tool{Name: "plexus_status", InputSchema: emptySchema,
		Description: "The Plexus daemon's state: its servers with their state, tool counts and last errors (no secrets)."},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			rev, servers := h.Servers()
			out := map[string]any{"revision": rev, "startedAt": h.StartedAt(), "servers": servers,
				"profile": p.name, "allowExternalCall": p.def.external, "allowWrite": p.def.write}
			if !p.def.external {
				out["note"] = apitype.ExternalCallOff
			}
			return jsonResult(out, nil)
		})
	p.addTool(&mcp.Tool{Name: "plexus_snapshot", InputSchema: emptySchema,
		Description: "Each server's state, its tools (as this profile names them) and its recent errors and stderr lines (no secrets)."},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, servers := h.Servers()
			type tool struct {
				Name        string `json:"name"`
				Server      string `json:"server"`
				Description string `json:"description,omitempty"`
			}
			tools := []tool{}
			for _, e := range p.entries() {
				tools = append(tools, tool{p.offeredName(e), e.Server, e.Description})
			}
			return jsonResult(map[string]any{"servers": servers, "tools": tools}, nil)
		})
}

// addWriteTools offers the control-plane writes, only with
// mcp.face.allowWrite on (R-FACE-2). A server an agent adds stays pending
// until a person approves it (R-FACE-6): an agent cannot grant itself tools.
func (p *profile) addWriteTools() {
	h := p.f.h
	named := func(extra map[string]any, required ...string) map[string]any {
		props := map[string]any{"name": map[string]any{"type": "string", "description": "The server's name, as in plexus_status."}}
		for k, v := range extra {
			props[k] = v
		}
		return map[string]any{"type": "object", "properties": props, "required": append([]string{"name"}, required...)}
	}
	type args struct {
		Name    string          `json:"name"`
		Enabled *bool           `json:"enabled"`
		Config  json.RawMessage `json:"config"`
	}
	parse := func(req *mcp.CallToolRequest) (args, error) {
		var a args
		err := json.Unmarshal(req.Params.Arguments, &a)
		if err == nil && a.Name == "" {
			err = errors.New(`"name" is required`)
		}
		return a, err
	}
	p.addTool(&mcp.Tool{Name: "plexus_restart", InputSchema: named(nil),
		Description: "Restart one of the user's MCP servers now."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parse(req)
			if err == nil {
				err = h.Restart(ctx, a.Name)
			}
			return p.serverResult(a.Name, err)
		})
	p.addTool(&mcp.Tool{Name: "plexus_set_enabled", InputSchema: named(map[string]any{"enabled": map[string]any{"type": "boolean"}}, "enabled"),
		Description: "Switch one of the user's MCP servers on or off."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parse(req)
			if err == nil && a.Enabled == nil {
				err = errors.New(`"enabled" is required`)
			}
			if err == nil {
				_, err = h.SetEnabled(ctx, a.Name, *a.Enabled, 0)
			}
			return p.serverResult(a.Name, err)
		})
	p.addTool(&mcp.Tool{Name: "plexus_add_server", InputSchema: named(map[string]any{"config": map[string]any{"type": "object",
		"description": `The server as in extensions.json, e.g. {"type":"stdio","command":"npx","args":["-y","pkg"]} or {"type":"http","url":"https://…"}; secrets only as {"env":"VAR"} references.`}}, "config"),
		Description: "Propose a new MCP server. It is saved but NOT started: the user must approve it with `plexus approve NAME` first. A stdio server without a \"sandbox\" gets the strict one (no network, writes only to its private folder)."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parse(req)
			if err == nil && len(a.Config) == 0 {
				err = errors.New(`"config" is required`)
			}
			if err == nil {
				_, err = h.PutServer(ctx, host.PutRequest{Name: a.Name, Config: withStrictSandbox(a.Config), Create: true, NoVerify: true, NeedsApproval: true})
			}
			if err != nil {
				return jsonResult(nil, err)
			}
			sc, _ := h.Server(a.Name)
			out := map[string]any{"added": a.Name, "pending": true,
				"next": "the user must run `plexus approve " + a.Name + "` before it starts"}
			if sc != nil {
				out["server"] = sc.Status
			}
			return jsonResult(out, nil)
		})
}

// serverResult is the state a write left server name in.
func (p *profile) serverResult(name string, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return jsonResult(nil, err)
	}
	sc, err := p.f.h.Server(name)
	if err != nil {
		return jsonResult(nil, err)
	}
	return jsonResult(sc.Status, nil)
}

// jsonResult renders v as the text of a tool result, or err as an error
// result the model can read.
func jsonResult(v any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

package face

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// addMetaTools offers search_tools, describe_tool and call_tool instead of
// the whole catalog, for clients that cap the number of tools (R-CAT-8).
func (p *profile) addMetaTools() {
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	p.addTool(&mcp.Tool{Name: "search_tools",
		Description: "Search the user's tools by words in their names and descriptions. Returns names and one-line descriptions; use describe_tool for a tool's input schema, then call_tool.",
		InputSchema: obj(map[string]any{"query": str("Words to look for; empty lists every tool."),
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many results (default 20)."}})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := unmarshalArgs(req, &a); err != nil {
				return jsonResult(nil, err)
			}
			return jsonResult(search(p.entries(), a.Query, a.Limit), nil)
		})
	p.addTool(&mcp.Tool{Name: "describe_tool",
		Description: "The full description and input schema of one tool found with search_tools.",
		InputSchema: obj(map[string]any{"name": str("The tool's name, as search_tools gave it.")}, "name")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Name string `json:"name"`
			}
			if err := unmarshalArgs(req, &a); err != nil {
				return jsonResult(nil, err)
			}
			e, ok := p.find(a.Name)
			if !ok {
				return jsonResult(nil, fmt.Errorf("no tool named %q: use search_tools", a.Name))
			}
			return jsonResult(map[string]any{"name": a.Name, "server": e.Server, "title": e.Title,
				"description": e.Description, "inputSchema": e.InputSchema}, nil)
		})
	p.addTool(&mcp.Tool{Name: "call_tool",
		Description: "Call one tool found with search_tools, with arguments matching its input schema (see describe_tool).",
		InputSchema: obj(map[string]any{"name": str("The tool's name."),
			"arguments": map[string]any{"type": "object", "description": "The tool's arguments."}}, "name")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := unmarshalArgs(req, &a); err != nil {
				return jsonResult(nil, err)
			}
			e, ok := p.find(a.Name)
			if !ok {
				return jsonResult(nil, fmt.Errorf("no tool named %q: use search_tools", a.Name))
			}
			d, err := p.downstream(ctx, req.Session)
			if err != nil {
				return nil, err
			}
			ctx = p.withPeer(ctx, req.Session, req.Params.GetProgressToken())
			ctx = withCaller(ctx, req.Extra)
			ctx = upstream.WithInput(ctx, req.Params.InputResponses, req.Params.RequestState)
			return d.sess.Call(ctx, e.Name, a.Arguments)
		})
}

func unmarshalArgs(req *mcp.CallToolRequest, v any) error {
	if len(req.Params.Arguments) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params.Arguments, v); err != nil {
		return fmt.Errorf("arguments: %v", err)
	}
	return nil
}

// find looks an entry up by the name this profile gives it.
func (p *profile) find(name string) (catalog.Entry, bool) {
	for _, e := range p.entries() {
		if p.offeredName(e) == name {
			return e, true
		}
	}
	return catalog.Entry{}, false
}

type hit struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Description string `json:"description"`
	score       int
}

// search ranks entries by how many query words their name, server and
// description contain (a word in the name counts double).
func search(entries []catalog.Entry, query string, limit int) []hit {
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	words := strings.Fields(strings.ToLower(query))
	var hits []hit
	for _, e := range entries {
		name := strings.ToLower(e.Tool + " " + e.Name + " " + e.Server)
		desc := strings.ToLower(e.Title + " " + e.Description)
		score := 0
		for _, w := range words {
			if strings.Contains(name, w) {
				score += 2
			} else if strings.Contains(desc, w) {
				score++
			}
		}
		if len(words) > 0 && score == 0 {
			continue
		}
		line, _, _ := strings.Cut(e.Description, "\n")
		if len(line) > 200 {
			line = line[:200] + "…"
		}
		hits = append(hits, hit{Name: e.Name, Server: e.Server, Description: line, score: score})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].Name < hits[j].Name
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	if hits == nil {
		hits = []hit{}
	}
	return hits
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve Plexus as an MCP server on stdin/stdout, for editors and agents",
		Long: `Serve Plexus as an MCP server on stdin and stdout: register this command in
an editor or agent (claude mcp add plexus -- plexus mcp). It talks to the
running daemon, starting it if it is not running, and holds a session of its
own. It always offers plexus_status and plexus_snapshot; with
mcp.face.allowExternalCall on in extensions.json it also offers every
server's tools under their Plexus names, and tells the client when they
change.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := ensureDaemon(cmd.Context(), c); err != nil {
				return err
			}
			return a.serveMCP(cmd.Context(), c)
		},
	}
}

// ensureDaemon starts the daemon in the background if it is not running,
// the way gopls's forwarder does, and waits until it answers.
func ensureDaemon(ctx context.Context, c *client.Client) error {
	if _, err := c.Status(ctx); !errors.Is(err, client.ErrDaemonNotRunning) {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	cmd := exec.Command(exe, "daemon")
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+c.Home())
	// Its own session: it outlives this process and the editor's signals.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	go cmd.Wait() // reaped if it exits while we live
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := c.Status(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the daemon did not come up: %w (see $PLEXUS_HOME/logs.jsonl)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// face is one `plexus mcp`: an SDK server whose tools mirror the daemon
// session's catalog.
type face struct {
	c    *client.Client
	sess *apitype.Session
	srv  *mcp.Server
	warn func(string, ...any)

	mu    sync.Mutex
	tools map[string]string // upstream tools offered: Plexus name → definition as offered
}

func (a *app) serveMCP(ctx context.Context, c *client.Client) error {
	sess, err := c.NewSession(ctx, apitype.NewSessionRequest{})
	if err != nil {
		return err
	}
	defer c.EndSession(context.WithoutCancel(ctx), sess.ID)
	f := &face{c: c, sess: sess, tools: map[string]string{}, warn: a.warnf,
		srv: mcp.NewServer(&mcp.Implementation{Name: "plexus", Version: "1"}, &mcp.ServerOptions{
			Instructions: "Plexus runs the user's MCP servers. plexus_status and plexus_snapshot describe them; " +
				"their tools are named mcp_<server>_<tool>_<hash>.",
		})}
	f.addControlTools()
	if sess.AllowWrite {
		f.addWriteTools()
	}
	if sess.AllowExternalCall {
		if err := f.sync(ctx); err != nil {
			return err
		}
		go f.follow(ctx)
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(a.env.Stdin), Writer: nopWriteCloser{a.env.Stdout}}
	return f.srv.Run(ctx, t)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func (f *face) addControlTools() {
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	f.srv.AddTool(&mcp.Tool{Name: "plexus_status", InputSchema: empty,
		Description: "The Plexus daemon's state: its servers with their state, tool counts and last errors (no secrets)."},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st, err := f.c.Status(ctx)
			return jsonResult(st, err)
		})
	f.srv.AddTool(&mcp.Tool{Name: "plexus_snapshot", InputSchema: empty,
		Description: "Each server's state, its tools (Plexus names) and its recent errors and stderr lines (no secrets)."},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			servers, err := f.c.Servers(ctx)
			if err != nil {
				return jsonResult(nil, err)
			}
			tools, err := f.c.SessionTools(ctx, f.sess.ID)
			return jsonResult(map[string]any{"servers": servers.Servers, "tools": tools.Tools}, err)
		})
}

// addWriteTools offers the control-plane writes, only with
// mcp.face.allowWrite on (R-FACE-2). A server an agent adds stays pending
// until a person approves it (R-FACE-6): an agent cannot grant itself tools.
func (f *face) addWriteTools() {
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
	f.srv.AddTool(&mcp.Tool{Name: "plexus_restart", InputSchema: named(nil),
		Description: "Restart one of the user's MCP servers now."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parse(req)
			if err != nil {
				return jsonResult(nil, err)
			}
			res, err := f.c.Restart(ctx, a.Name)
			return jsonResult(res, err)
		})
	f.srv.AddTool(&mcp.Tool{Name: "plexus_set_enabled", InputSchema: named(map[string]any{"enabled": map[string]any{"type": "boolean"}}, "enabled"),
		Description: "Switch one of the user's MCP servers on or off."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parse(req)
			if err == nil && a.Enabled == nil {
				err = errors.New(`"enabled" is required`)
			}
			if err != nil {
				return jsonResult(nil, err)
			}
			res, err := f.c.SetEnabled(ctx, a.Name, *a.Enabled)
			return jsonResult(res, err)
		})
	f.srv.AddTool(&mcp.Tool{Name: "plexus_add_server", InputSchema: named(map[string]any{"config": map[string]any{"type": "object",
		"description": `The server as in extensions.json, e.g. {"type":"stdio","command":"npx","args":["-y","pkg"]} or {"type":"http","url":"https://…"}; secrets only as {"env":"VAR"} references.`}}, "config"),
		Description: "Propose a new MCP server. It is saved but NOT started: the user must approve it with `plexus approve NAME` first."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parse(req)
			if err == nil && len(a.Config) == 0 {
				err = errors.New(`"config" is required`)
			}
			if err != nil {
				return jsonResult(nil, err)
			}
			res, err := f.c.AddServer(ctx, apitype.PutServerRequest{Name: a.Name, Config: a.Config, NoVerify: true, Pending: true}, 0)
			if err != nil {
				return jsonResult(nil, err)
			}
			return jsonResult(map[string]any{"added": a.Name, "pending": true,
				"next": "the user must run `plexus approve " + a.Name + "` before it starts", "server": res.Server}, nil)
		})
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

// sync makes the offered upstream tools match the session's catalog; the
// SDK tells the client (notifications/tools/list_changed).
func (f *face) sync(ctx context.Context) error {
	list, err := f.c.SessionTools(ctx, f.sess.ID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range list.Tools {
		seen[t.Name] = true
		var schema map[string]any
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema["type"] != "object" {
			f.warn("tool %s has no object input schema; not offered", t.Name)
			continue
		}
		def := t.Title + "\x00" + t.Description + "\x00" + string(t.InputSchema) + "\x00" + string(t.OutputSchema)
		if f.tools[t.Name] == def {
			continue // unchanged: no list_changed for it
		}
		tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema}
		if len(t.OutputSchema) > 0 {
			tool.OutputSchema = t.OutputSchema
		}
		f.srv.AddTool(tool, f.forward(t.Name)) // replaces a changed one
		f.tools[t.Name] = def
	}
	var gone []string
	for name := range f.tools {
		if !seen[name] {
			gone = append(gone, name)
			delete(f.tools, name)
		}
	}
	if len(gone) > 0 {
		f.srv.RemoveTools(gone...)
	}
	return nil
}

// forward calls a tool through the daemon. The client's cancellation
// cancels the request, and the daemon sends notifications/cancelled
// upstream.
func (f *face) forward(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := f.c.SessionCall(ctx, f.sess.ID, apitype.CallRequest{Name: name, Arguments: req.Params.Arguments})
		if err != nil {
			return jsonResult(nil, err)
		}
		var out mcp.CallToolResult
		if err := json.Unmarshal(res.Result, &out); err != nil {
			return nil, fmt.Errorf("decoding the result of %s: %w", name, err)
		}
		return &out, nil
	}
}

// follow re-syncs the tools whenever the session's catalog changes.
func (f *face) follow(ctx context.Context) {
	for ctx.Err() == nil {
		es, err := f.c.SessionEvents(ctx, f.sess.ID)
		if err != nil {
			return
		}
		for {
			ev, err := es.Next()
			if err != nil {
				break
			}
			if ev.Type == apitype.EventCatalog || ev.Type == apitype.EventServer {
				if err := f.sync(ctx); err != nil {
					f.warn("refreshing the tools: %v", err)
				}
			}
		}
		es.Close()
	}
}

// Package conformanceclient is the client side of the official MCP
// conformance suite (npm @modelcontextprotocol/conformance): the hidden
// `plexus __conformance-client URL` command the suite runs, reading the
// scenario from MCP_CONFORMANCE_SCENARIO and its data from
// MCP_CONFORMANCE_CONTEXT. Its OAuth runs on the daemon's own package
// (internal/oauth), headlessly: the suite's authorization server redirects
// at once, so the client follows the authorization URL itself.
package conformanceclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/oauth"
)

// Command is the hidden subcommand's name.
const Command = "__conformance-client"

// Main runs the scenario named by MCP_CONFORMANCE_SCENARIO against the
// server URL in args and returns the exit code.
func Main(args []string, stderr io.Writer) int {
	logger := log.New(stderr, "conformance-client: ", 0)
	if len(args) != 1 {
		logger.Print("usage: plexus " + Command + " URL (with MCP_CONFORMANCE_SCENARIO set)")
		return 2
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cctx); err != nil {
			logger.Printf("MCP_CONFORMANCE_CONTEXT is not a JSON object: %v", err)
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, scenario, args[0], cctx, logger); err != nil {
		logger.Printf("scenario %q failed: %v", scenario, err)
		return 1
	}
	return 0
}

// run connects, lists tools and calls what the scenario offers.
func run(ctx context.Context, scenario, serverURL string, cctx map[string]any, logger *log.Logger) error {
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// Accept with no content: the SDK fills in the schema's defaults.
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	}
	if scenario == "sep-2322-client-request-state" {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
		}
	}
	tr := &mcp.StreamableClientTransport{Endpoint: serverURL}
	if strings.HasPrefix(scenario, "auth/") {
		h, cleanup, err := authHandler(scenario, serverURL, cctx)
		if err != nil {
			return err
		}
		defer cleanup()
		tr.OAuthHandler = h
		// Requests go through the daemon's own OAuth transport: it puts the
		// token (bearer or DPoP, with its proof) on every request.
		tr.HTTPClient = &http.Client{Transport: h.Transport(serverURL, nil)}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "plexus-conformance-client", Version: "1.0.0"}, opts)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	if scenario == "request-metadata" {
		return nil
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		if scenario == "json-schema-ref-no-deref" {
			return nil
		}
		return fmt.Errorf("tools/list: %w", err)
	}
	call := func(name string, args map[string]any) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", name, err)
		}
		return nil
	}
	has := func(name string) bool {
		return slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == name })
	}
	switch {
	case strings.HasPrefix(scenario, "auth/"):
		return call("test-tool", map[string]any{})
	case scenario == "tools_call":
		return call("add_numbers", map[string]any{"a": 5, "b": 3})
	case scenario == "sse-retry":
		return call("test_reconnection", map[string]any{})
	case scenario == "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", map[string]any{})
	case scenario == "json-schema-2020-12-preservation":
		i := slices.IndexFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == "json_schema_2020_12_tool" })
		if i < 0 {
			return fmt.Errorf("tool json_schema_2020_12_tool not offered")
		}
		return call("json_schema_echo", map[string]any{"schema": tools.Tools[i].InputSchema})
	case scenario == "sep-2322-client-request-state":
		for _, n := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			if err := call(n, map[string]any{}); err != nil {
				logger.Printf("%v (expected for some)", err)
			}
		}
	case scenario == "http-standard-headers":
		if len(tools.Tools) > 0 {
			_ = call(tools.Tools[0].Name, map[string]any{})
		}
		if res, err := cs.ListResources(ctx, nil); err == nil && len(res.Resources) > 0 {
			_, _ = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI})
		}
		if ps, err := cs.ListPrompts(ctx, nil); err == nil && len(ps.Prompts) > 0 {
			_, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: ps.Prompts[0].Name, Arguments: map[string]string{}})
		}
	case scenario == "http-custom-headers":
		calls, _ := cctx["toolCalls"].([]any)
		for _, item := range calls {
			obj, _ := item.(map[string]any)
			name, _ := obj["name"].(string)
			args, _ := obj["arguments"].(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			if err := call(name, args); err != nil {
				logger.Print(err)
			}
		}
	case scenario == "http-invalid-tool-headers":
		for _, t := range tools.Tools {
			if err := call(t.Name, map[string]any{"region": "us-west1"}); err != nil {
				logger.Print(err)
			}
		}
	default:
		if has("add_numbers") {
			return call("add_numbers", map[string]any{"a": 5, "b": 3})
		}
	}
	return nil
}

// authHandler builds the OAuth handler on a fresh token store, with the
// grant the scenario's context calls for.
func authHandler(scenario, serverURL string, cctx map[string]any) (*oauth.Handler, func(), error) {
	dir, err := os.MkdirTemp("", "plexus-conformance-*")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	m, err := oauth.Open(oauth.Options{
		Home: dir,
		// The suite's authorization server accepts this URL as a client ID
		// metadata document (auth/basic-cimd); Plexus itself hosts none.
		MetadataDocumentURL: "https://conformance-test.local/client-metadata.json",
	})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	p := oauth.LoginParams{Server: "conformance", URL: serverURL, RedirectURI: "http://localhost:3000/callback"}
	str := func(k string) string { v, _ := cctx[k].(string); return v }
	// A file as the platform would provide it (a token the workload or
	// the sign-in agent keeps current).
	file := func(name, content string) (string, error) {
		path := filepath.Join(dir, name)
		return path, os.WriteFile(path, []byte(content), 0o600)
	}
	switch {
	case str("idp_id_token") != "":
		path, err := file("id-token", str("idp_id_token"))
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		p.Grant = &oauth.Grant{Type: oauth.GrantTokenExchange, ClientID: str("client_id"), ClientSecret: str("client_secret"),
			IDP: &oauth.IdentityProvider{TokenURL: str("idp_token_endpoint"), ClientID: str("idp_client_id"), IDTokenFile: path}}
	case str("valid_jwt") != "":
		path, err := file("workload-token", str("valid_jwt"))
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		p.Grant = &oauth.Grant{Type: oauth.GrantJWTBearer, ClientID: str("client_id"), AssertionFile: path}
	case str("private_key_pem") != "":
		p.Grant = &oauth.Grant{Type: oauth.GrantClientCredentials, ClientID: str("client_id"),
			PrivateKey: []byte(str("private_key_pem")), SigningAlg: str("signing_algorithm")}
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		p.Grant = &oauth.Grant{Type: oauth.GrantClientCredentials, ClientID: str("client_id"), ClientSecret: str("client_secret")}
	case str("client_id") != "":
		p.Manual = &oauth.Manual{ClientID: str("client_id"), ClientSecret: str("client_secret")}
	}
	if p.Grant != nil {
		m.SetGrant(p)
	}
	return &oauth.Handler{M: m, Params: p}, cleanup, nil
}

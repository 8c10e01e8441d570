// Command peerserver serves the peer matrix's set of tools, resources and
// prompts (internal/e2e/peermatrix_test.go) on one of two Go MCP libraries
// — the official go-sdk or github.com/mark3labs/mcp-go — over one
// transport, so that the matrix can put the same server behind Plexus and
// in front of a client directly.
//
//	peerserver -sdk gosdk|mcpgo -transport stdio|http|stateless|sse [-addr 127.0.0.1:PORT]
//
// The set, the same on every peer of the matrix (the TypeScript ones are in
// testenv/peerkit/server.mjs):
//
//   - echo {text}: "echo: TEXT".
//   - hello (no arguments): "hello".
//   - slow {key, steps, ms}: sends progress i/steps (when the call carries a
//     progress token) and waits ms between steps; "slow done: N" at the end.
//     It notes under key whether it ran to the end ("done") or saw its call
//     cancelled ("cancelled").
//   - slow_status {key}: what slow noted under key ("running", "done",
//     "cancelled", or "unknown").
//   - log: sends one log message per level (debug, info, warning, error;
//     data "log LEVEL", logger "peer") as the library sends them, then
//     "logged".
//   - ask {kind}: asks the client mid-call for an elicitation, a sampling
//     or its roots, in the library's way that serves both eras where it has
//     one (an input_required result, fulfilled by the library itself for a
//     session-era client), and answers with what it got.
//   - ask_legacy {kind}: the same as a server→client request on the
//     session (the session era's way; a 2026-07-28 client cannot be asked
//     so).
//   - the resource peer://static ("static resource") and the template
//     peer://item/{id} ("item ID").
//   - the prompt greet {name}: one user message "Hello, NAME!"; its
//     argument name completes from Ada, Alan, Grace.
//
// The stdio server writes nothing but protocol to stdout; HTTP servers
// serve /mcp (streamable HTTP) or /sse with /message (legacy SSE) on -addr.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Names and texts of the set, shared by both libraries.
const (
	staticURI    = "peer://static"
	staticText   = "static resource"
	itemTemplate = "peer://item/{id}"
	promptName   = "greet"
	logger       = "peer"
)

// logLevels are the levels log sends, lowest first.
var logLevels = []string{"debug", "info", "warning", "error"}

// completions are the values greet's argument name completes from.
var completions = []string{"Ada", "Alan", "Grace"}

// complete returns the completions that start with prefix.
func complete(prefix string) []string {
	var out []string
	for _, c := range completions {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// itemID is the id of a peer://item/{id} URI.
func itemID(uri string) string { return strings.TrimPrefix(uri, "peer://item/") }

// slowStates is what slow noted per key.
var slowStates = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

func setSlow(key, state string) {
	slowStates.Lock()
	defer slowStates.Unlock()
	slowStates.m[key] = state
}

func slowState(key string) string {
	slowStates.Lock()
	defer slowStates.Unlock()
	if s, ok := slowStates.m[key]; ok {
		return s
	}
	return "unknown"
}

// elicitText, sampleText and rootsText render what the client answered.
func elicitText(action string, content map[string]any) string {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, content[k]))
	}
	return "elicitation: " + action + " " + strings.Join(parts, ",")
}

// textOf is the text of a sampling answer's content, whatever shape the
// library decoded it to: one content block or several, a struct or a map.
func textOf(content any) string {
	b, _ := json.Marshal(content)
	var one struct {
		Type, Text string
	}
	if json.Unmarshal(b, &one) == nil && one.Type == "text" {
		return one.Text
	}
	var many []struct {
		Type, Text string
	}
	json.Unmarshal(b, &many)
	for _, c := range many {
		if c.Type == "text" {
			return c.Text
		}
	}
	return "(no text: " + string(b) + ")"
}

func sampleText(text, model string) string { return "sampling: " + text + " (" + model + ")" }

func rootsText(uris []string) string { return "roots: " + strings.Join(uris, ",") }

// The questions ask puts.
const (
	elicitMessage = "Who are you?"
	samplePrompt  = "Say hello"
)

func main() {
	sdk := flag.String("sdk", "gosdk", "gosdk or mcpgo")
	transport := flag.String("transport", "stdio", "stdio, http, stateless or sse")
	addr := flag.String("addr", "127.0.0.1:0", "listen address of the HTTP transports")
	flag.Parse()
	var err error
	switch *sdk {
	case "gosdk":
		err = serveGoSDK(*transport, *addr)
	case "mcpgo":
		err = serveMCPGo(*transport, *addr)
	default:
		err = fmt.Errorf("unknown -sdk %q", *sdk)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerserver:", err)
		os.Exit(1)
	}
}

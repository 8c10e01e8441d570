package exporter

import (
	"bytes"
	"encoding/json"
)

// GeminiServer is one entry of Gemini CLI's settings.json mcpServers, in
// Gemini's own words: a stdio server has command, args and env; a
// streamable HTTP server has httpUrl, a legacy SSE server url; either may
// send headers. Values are written as given: a secret belongs in the
// environment, named as Gemini expands it ("$TOKEN"), never here.
type GeminiServer struct {
	// Type is "stdio", "http" (streamable HTTP) or "sse".
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
}

// geminiEntry is the JSON shape of one entry; the field order is the one
// Gemini CLI's documentation shows.
type geminiEntry struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	HTTPURL string            `json:"httpUrl,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// GeminiSettings is a settings.json holding servers under mcpServers
// (names sorted, two-space indent, a final newline), to merge into the
// one Gemini CLI has.
func GeminiSettings(servers map[string]GeminiServer) string {
	out := map[string]map[string]geminiEntry{"mcpServers": {}}
	for name, s := range servers {
		e := geminiEntry{Headers: s.Headers}
		switch s.Type {
		case "http":
			e.HTTPURL = s.URL
		case "sse":
			e.URL = s.URL
		default:
			e = geminiEntry{Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd}
		}
		out["mcpServers"][name] = e
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err) // strings and maps of strings always encode
	}
	return b.String()
}

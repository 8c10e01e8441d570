package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// The results below are the upstream server's, passed through by the daemon
// unchanged; only the fields the human output needs are decoded, and
// anything unknown is summarized rather than refused, so a newer protocol
// revision still prints something useful.

// toolResult is the part of an MCP CallToolResult the CLI shows.
type toolResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              map[string]any  `json:"_meta,omitempty"`
}

// content is one MCP content block.
type content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	MIMEType string            `json:"mimeType,omitempty"`
	Data     string            `json:"data,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Resource *resourceContents `json:"resource,omitempty"`
}

// resourceContents is one entry of a resource's contents.
type resourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// describe returns a content block as text for people: text as is, other
// blocks as a one-line summary in brackets.
func (c content) describe() string {
	switch c.Type {
	case "text":
		return sanitize(c.Text)
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %d bytes]", c.Type, sanitize(c.MIMEType), base64Len(c.Data))
	case "resource":
		uri := ""
		if c.Resource != nil {
			uri = c.Resource.URI
		}
		return "[resource " + oneLine(uri) + "]"
	case "resource_link":
		return "[resource_link " + oneLine(c.URI) + "]"
	}
	return "[" + oneLine(c.Type) + "]"
}

// base64Len is the decoded size of base64 data, tolerant of padding.
func base64Len(data string) int {
	data = strings.TrimRight(data, "=")
	return base64.RawStdEncoding.DecodedLen(len(data))
}

// renderCall prints a tool's result. A result marked isError, or one whose
// outcome is unknown, is reported on stderr whatever the format, because a
// script reading stdout must not take it for success.
func (a *app) renderCall(raw json.RawMessage, asJSON bool) error {
	var res toolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("the daemon sent a result that is not a CallToolResult: %w", err)
	}
	if outcome, _ := res.Meta[apitype.MetaOutcome].(string); outcome == "unknown" {
		a.warnf("the connection to the server was lost during the call: it may or may not have taken effect; check before calling again")
	}
	if asJSON {
		if err := printRawJSON(a.stdout(), raw); err != nil {
			return err
		}
		if res.IsError {
			return &exitError{code: ExitError}
		}
		return nil
	}
	out := a.stdout()
	if res.IsError {
		out = a.stderr()
	}
	if err := writeContent(out, res.Content, res.StructuredContent); err != nil {
		return err
	}
	if !res.IsError {
		return nil
	}
	if remedy := callErrorRemedy(res.Meta); remedy != "" {
		fmt.Fprintln(a.stderr(), remedy)
	}
	return &exitError{code: ExitError}
}

// callErrorRemedy advises on the errors Plexus itself made (MetaError).
func callErrorRemedy(meta map[string]any) string {
	switch kind, _ := meta[apitype.MetaError].(string); kind {
	case "timeout":
		return "the call timed out: raise the server's limit with `plexus edit SERVER --call-timeout MS`"
	case "unavailable":
		return "the server is not ready: see `plexus ls` for its state and last error"
	}
	return ""
}

// writeContent prints each content block on its own line. A result with
// structured content only (allowed, though servers SHOULD also send text)
// prints that instead of nothing.
func writeContent(w io.Writer, blocks []content, structured json.RawMessage) error {
	if len(blocks) == 0 && len(structured) > 0 && string(structured) != "null" {
		return printRawJSON(w, structured)
	}
	var b strings.Builder
	for _, c := range blocks {
		b.WriteString(c.describe())
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderResource prints a ReadResourceResult: text contents as is, blobs
// summarized.
func renderResource(w io.Writer, raw json.RawMessage) error {
	var res struct {
		Contents []resourceContents `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("the daemon sent a result that is not a ReadResourceResult: %w", err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		if c.Blob != "" {
			fmt.Fprintf(&b, "[blob %s %s, %d bytes]\n", oneLine(c.URI), oneLine(c.MIMEType), base64Len(c.Blob))
			continue
		}
		b.WriteString(sanitize(c.Text))
		if !strings.HasSuffix(c.Text, "\n") {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderPrompt prints a GetPromptResult's messages as "role: text".
func renderPrompt(w io.Writer, raw json.RawMessage) error {
	var res struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("the daemon sent a result that is not a GetPromptResult: %w", err)
	}
	var b strings.Builder
	for _, m := range res.Messages {
		blocks, err := decodeBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("the daemon sent a prompt message that is not MCP content: %w", err)
		}
		for _, c := range blocks {
			text := strings.TrimRight(c.describe(), "\n")
			fmt.Fprintf(&b, "%s: %s\n", oneLine(m.Role), text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// decodeBlocks reads a message's content, one block or (in newer protocol
// revisions) an array of blocks.
func decodeBlocks(raw json.RawMessage) ([]content, error) {
	if s := strings.TrimSpace(string(raw)); strings.HasPrefix(s, "[") {
		var blocks []content
		err := json.Unmarshal(raw, &blocks)
		return blocks, err
	}
	var c content
	err := json.Unmarshal(raw, &c)
	return []content{c}, err
}

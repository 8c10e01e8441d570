package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kinds of Entry.
const (
	// KindTool is an upstream tool, called through to the server.
	KindTool = "tool"
	// KindReadResource is the per-server operation that reads a resource by
	// URI (R-CAT-2).
	KindReadResource = "read_resource"
	// KindGetPrompt is the per-server operation that gets a prompt by name
	// (R-CAT-2).
	KindGetPrompt = "get_prompt"
)

// Entry is one advertised tool: an upstream tool, or one of the per-server
// operations. Its text fields are already cleaned and bounded, and its
// schemas are compact JSON, so it can be handed to a model as is.
type Entry struct {
	// Name is the advertised name (ToolName or OpName).
	Name string
	// Server is the configured name of the upstream server.
	Server string
	// Tool is the upstream tool's original name, or the operation (the same
	// as Kind) for the per-server operations.
	Tool        string
	Title       string
	Description string
	// InputSchema is a JSON object schema; never empty.
	InputSchema json.RawMessage
	// OutputSchema and Annotations are empty when the server gave none.
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// Kind is KindTool, KindReadResource or KindGetPrompt.
	Kind string
}

// Filter is a server's enabledTools / disabledTools (R-CAT-3), by original
// tool name. A non-empty Enabled keeps only the tools it lists; Disabled then
// removes tools. The per-server operations are not filtered.
type Filter struct {
	Enabled  []string
	Disabled []string
}

// maxToolNameLen is the MCP spec's bound on tool names: "Tool names SHOULD
// be between 1 and 128 characters in length (inclusive)".
const maxToolNameLen = 128

// maxTitle bounds titles, which are meant to be a few words.
const maxTitle = 256

// emptyObjectSchema stands in for a missing input schema: MCP requires one,
// and the model APIs reject a function without parameters.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Build prepares the catalog of one server: it filters, checks, cleans and
// names the server's tools, adds the read_resource operation if the server
// offers resources or templates and get_prompt if it offers prompts, and
// returns the entries sorted by Name.
//
// A tool that cannot be offered safely — invalid name, duplicate, schema over
// a limit — is left out and explained in warnings, and so is anything that
// was truncated. A catalog over MaxTools or MaxCatalogBytes fails as a whole
// with a *LimitError (R-CAT-4). Warnings name the tool concerned; the caller
// knows the server.
func Build(server string, tools []*mcp.Tool, resources []*mcp.Resource, templates []*mcp.ResourceTemplate,
	prompts []*mcp.Prompt, f Filter, l Limits) (entries []Entry, warnings []string, err error) {
	l = l.withDefaults()
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }

	kept := filterTools(tools, f, warn)
	if len(kept) > l.MaxTools {
		return nil, warnings, &LimitError{Server: server, Limit: "tools", Size: len(kept), Max: l.MaxTools}
	}

	seen := make(map[string]bool, len(kept))
	// Sized for every tool and both operations: the entries are kept for as
	// long as the server runs, and growing by appends leaves spare room.
	entries = make([]Entry, 0, len(kept)+2)
	for _, t := range kept {
		if seen[t.Name] {
			warn("tool %q is listed more than once; keeping the first", t.Name)
			continue
		}
		seen[t.Name] = true
		e, ok := toolEntry(server, t, l, warn)
		if ok {
			entries = append(entries, e)
		}
	}
	if len(resources) > 0 || len(templates) > 0 {
		entries = append(entries, readResourceEntry(server, resources, templates, l, warn))
	}
	if len(prompts) > 0 {
		entries = append(entries, getPromptEntry(server, prompts, l, warn))
	}

	slices.SortStableFunc(entries, func(a, b Entry) int { return cmp.Compare(a.Name, b.Name) })
	// Distinct inputs give distinct names unless 40 bits of SHA-256 collide;
	// check rather than trust that, since a collision would route calls to
	// the wrong tool.
	entries = slices.CompactFunc(entries, func(a, b Entry) bool {
		if a.Name == b.Name {
			warn("tool %q is left out: its name %s collides with tool %q", b.Tool, b.Name, a.Tool)
			return true
		}
		return false
	})

	if size := catalogSize(entries); size > l.MaxCatalogBytes {
		return nil, warnings, &LimitError{Server: server, Limit: "bytes", Size: size, Max: l.MaxCatalogBytes}
	}
	return entries, warnings, nil
}

// filterTools applies f and drops nil tools, keeping the server's order.
func filterTools(tools []*mcp.Tool, f Filter, warn func(string, ...any)) []*mcp.Tool {
	offered := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t != nil {
			offered[t.Name] = true
		}
	}
	// A name in the filter that matches nothing is most likely a typo, and
	// the user would otherwise never learn why a tool is missing.
	for _, n := range f.Enabled {
		if !offered[n] {
			warn("enabledTools names %q, which the server does not offer", n)
		}
	}
	for _, n := range f.Disabled {
		if !offered[n] {
			warn("disabledTools names %q, which the server does not offer", n)
		}
	}

	var kept []*mcp.Tool
	for _, t := range tools {
		if t == nil {
			continue
		}
		if len(f.Enabled) > 0 && !slices.Contains(f.Enabled, t.Name) {
			continue
		}
		if slices.Contains(f.Disabled, t.Name) {
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

// toolEntry prepares one upstream tool, or reports (through warn) why it is
// left out.
func toolEntry(server string, t *mcp.Tool, l Limits, warn func(string, ...any)) (Entry, bool) {
	if reason := invalidName(t.Name); reason != "" {
		warn("tool %q is left out: its name %s", t.Name, reason)
		return Entry{}, false
	}
	in, err := prepareSchema(t.InputSchema, l)
	if err != nil {
		warn("tool %q is left out: its input schema %v", t.Name, err)
		return Entry{}, false
	}
	if in == nil {
		in = emptyObjectSchema
	}
	out, err := prepareSchema(t.OutputSchema, l)
	if err != nil {
		warn("tool %q is left out: its output schema %v", t.Name, err)
		return Entry{}, false
	}
	ann, err := prepareAnnotations(t.Annotations)
	if err != nil {
		warn("tool %q is left out: its annotations %v", t.Name, err)
		return Entry{}, false
	}
	return Entry{
		Name:         ToolName(server, t.Name),
		Server:       server,
		Tool:         t.Name,
		Title:        boundedText(t.Name, "title", t.Title, maxTitle, warn),
		Description:  boundedText(t.Name, "description", t.Description, l.MaxDescription, warn),
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  ann,
		Kind:         KindTool,
	}, true
}

// invalidName says what is wrong with an upstream tool or prompt name, or
// returns "". Control and format characters are refused rather than cleaned:
// the name is what Plexus sends back upstream, so it must stay exact, and a
// name with invisible characters can only be meant to look like another.
func invalidName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case utf8.RuneCountInString(name) > maxToolNameLen:
		return fmt.Sprintf("is longer than %d characters", maxToolNameLen)
	}
	for _, r := range name {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return fmt.Sprintf("contains the control or invisible character %U", r)
		}
	}
	return ""
}

// boundedText cleans s and truncates it to max runes, warning when it had to.
func boundedText(tool, field, s string, max int, warn func(string, ...any)) string {
	c := Clean(s)
	t, cut := truncate(c, max)
	if cut {
		warn("tool %q: %s truncated from %d to %d characters", tool, field, utf8.RuneCountInString(c), max)
	}
	return t
}

// prepareAnnotations encodes the tool's annotations with a cleaned title (it
// is displayed like any title).
func prepareAnnotations(a *mcp.ToolAnnotations) (json.RawMessage, error) {
	if a == nil {
		return nil, nil
	}
	c := *a
	c.Title, _ = truncate(Clean(c.Title), maxTitle)
	return marshalCompact(&c)
}

// catalogSize is the size of the entries rendered as MCP tools, which is what
// a client receives in tools/list.
func catalogSize(entries []Entry) int {
	n := 0
	for _, e := range entries {
		b, err := json.Marshal(mcpTool(e))
		if err != nil {
			// Entries hold only strings and JSON this package produced.
			panic(fmt.Sprintf("catalog: encoding entry %s: %v", e.Name, err))
		}
		n += len(b)
	}
	return n
}

package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
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
	// Raw is an upstream tool's definition as the server wrote it, under
	// its own name: what a client gets through a proxy that passes the
	// server on (face), with every member Plexus does not model (_meta,
	// execution, annotations of a newer spec) and the server's key order
	// and white space. It differs from the server's bytes only where text
	// had to be cleaned of what hides (WireText, R-CAT-7) or bounded
	// (R-CAT-4), each said in a warning. Nil for the per-server operations.
	Raw json.RawMessage
	// Index is an upstream tool's place in its server's list, from 0: the
	// entries are sorted by Name, a client of one server sees its order.
	Index int
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

// Build prepares the catalog of one server from its lists: it filters,
// checks, cleans and names the server's tools, adds the read_resource
// operation if the server offers resources or templates and get_prompt if
// it offers prompts, and reads its resources, templates and prompts. The
// entries are sorted by Name.
//
// A tool that cannot be offered safely — invalid name, duplicate, schema over
// a limit — is left out and explained in warnings, and so is anything that
// was truncated. A catalog over MaxTools or MaxCatalogBytes fails as a whole
// with a *LimitError (R-CAT-4). Warnings name the tool concerned; the caller
// knows the server.
func Build(server string, lists Lists, f Filter, l Limits) (b Built, warnings []string, err error) {
	l = l.withDefaults()
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }

	tools := parseTools(lists.Tools, warn)
	for _, t := range tools {
		b.Listed = append(b.Listed, t.Name)
	}
	kept := filterTools(tools, f, warn)
	if len(kept) > l.MaxTools {
		return Built{}, warnings, &LimitError{Server: server, Limit: "tools", Size: len(kept), Max: l.MaxTools}
	}
	b.Resources = parseResources(server, lists.Resources, warn)
	b.Templates = parseTemplates(server, lists.Templates, warn)
	b.Prompts = parsePrompts(server, lists.Prompts, warn)

	seen := make(map[string]bool, len(kept))
	// Sized for every tool and both operations: the entries are kept for as
	// long as the server runs, and growing by appends leaves spare room.
	entries := make([]Entry, 0, len(kept)+2)
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
	if len(b.Resources) > 0 || len(b.Templates) > 0 {
		entries = append(entries, readResourceEntry(server, b.Resources, b.Templates, l, warn))
	}
	if len(b.Prompts) > 0 {
		entries = append(entries, getPromptEntry(server, b.Prompts, l, warn))
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
		return Built{}, warnings, &LimitError{Server: server, Limit: "bytes", Size: size, Max: l.MaxCatalogBytes}
	}
	b.Entries = entries
	return b, warnings, nil
}

// listedTool is one listed tool: the members Plexus reads, and its definition
// as the server wrote it. The schemas and annotations are slices of raw:
// a schema already in the catalog's form is shared by the entry, not
// copied (prepareSchema).
type listedTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"-"`
	OutputSchema json.RawMessage `json:"-"`
	Annotations  json.RawMessage `json:"-"`

	raw   json.RawMessage
	index int
}

// parseTools reads a server's tools, in its order; one that is not a
// valid definition is left out, saying why.
func parseTools(raws []json.RawMessage, warn func(string, ...any)) []*listedTool {
	out := make([]*listedTool, 0, len(raws))
	for i, raw := range raws {
		t := &listedTool{raw: raw, index: i}
		var objects struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  json.RawMessage `json:"annotations"`
		}
		err := json.Unmarshal(raw, t)
		if err == nil && !jsonscan.Members(raw, func(k, v []byte) bool {
			switch string(k) {
			case "inputSchema":
				t.InputSchema = v
			case "outputSchema":
				t.OutputSchema = v
			case "annotations":
				t.Annotations = v
			}
			return true
		}) {
			// A key written with escapes: decoded instead, as copies.
			err = json.Unmarshal(raw, &objects)
			t.InputSchema, t.OutputSchema, t.Annotations = objects.InputSchema, objects.OutputSchema, objects.Annotations
		}
		if err != nil {
			warn("tool %d of the list is left out: it is not a valid definition (%v)", i+1, err)
			continue
		}
		out = append(out, t)
	}
	return out
}

// filterTools applies f and drops nil tools, keeping the server's order.
func filterTools(tools []*listedTool, f Filter, warn func(string, ...any)) []*listedTool {
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

	var kept []*listedTool
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
func toolEntry(server string, t *listedTool, l Limits, warn func(string, ...any)) (Entry, bool) {
	if reason := invalidName(t.Name); reason != "" {
		warn("tool %q is left out: its name %s", t.Name, reason)
		return Entry{}, false
	}
	in, err := prepareSchema(nullIsNone(t.InputSchema), l)
	if err != nil {
		warn("tool %q is left out: its input schema %v", t.Name, err)
		return Entry{}, false
	}
	if in == nil {
		in = emptyObjectSchema
	}
	out, err := prepareSchema(nullIsNone(t.OutputSchema), l)
	if err != nil {
		warn("tool %q is left out: its output schema %v", t.Name, err)
		return Entry{}, false
	}
	ann, err := prepareAnnotations(nullIsNone(t.Annotations))
	if err != nil {
		warn("tool %q is left out: its annotations %v", t.Name, err)
		return Entry{}, false
	}
	raw, err := wireDefinition(t, l, warn)
	if err != nil {
		warn("tool %q is left out: %v", t.Name, err)
		return Entry{}, false
	}
	return Entry{
		Name:         ToolName(server, t.Name),
		Server:       server,
		Tool:         t.Name,
		Title:        boundedText(t.Name, "title", t.Title, maxTitle, nil),
		Description:  boundedText(t.Name, "description", t.Description, l.MaxDescription, nil),
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  ann,
		Kind:         KindTool,
		Raw:          raw,
		Index:        t.index,
	}, true
}

// nullIsNone treats a member written as null as one not written.
func nullIsNone(raw json.RawMessage) json.RawMessage {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

// wireDefinition is the definition of t that Plexus passes on: the
// server's own bytes, with only the text that had to be cleaned
// (WireText, R-CAT-7) or bounded (R-CAT-4) replaced, each change said in a
// warning. Members Plexus does not read are never touched.
func wireDefinition(t *listedTool, l Limits, warn func(string, ...any)) (json.RawMessage, error) {
	raw := t.raw
	set := func(field, key, value string, max int) error {
		w, cut := truncate(WireText(value), max)
		if w == value {
			return nil
		}
		if cut {
			warn("tool %q: %s truncated from %d to %d characters", t.Name, field, utf8.RuneCountInString(WireText(value)), max)
		} else {
			warn("tool %q: %s cleaned of invisible characters or HTML comments", t.Name, field)
		}
		var err error
		raw, err = withString(raw, key, w)
		return err
	}
	if err := set("title", "title", t.Title, maxTitle); err != nil {
		return nil, err
	}
	if err := set("description", "description", t.Description, l.MaxDescription); err != nil {
		return nil, err
	}
	if a := nullIsNone(t.Annotations); a != nil {
		var at struct {
			Title string `json:"title"`
		}
		if json.Unmarshal(a, &at) == nil {
			if w, _ := truncate(WireText(at.Title), maxTitle); w != at.Title {
				warn("tool %q: annotations.title cleaned or truncated", t.Name)
				a2, err := withString(a, "title", w)
				if err != nil {
					return nil, err
				}
				if raw, err = WithMember(raw, "annotations", a2); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, s := range []struct {
		field, key string
		schema     json.RawMessage
	}{{"input schema", "inputSchema", t.InputSchema}, {"output schema", "outputSchema", t.OutputSchema}} {
		schema := nullIsNone(s.schema)
		if schema == nil || !schemaHidesText(schema) {
			continue
		}
		clean, err := wireSchema(schema)
		if err != nil {
			return nil, fmt.Errorf("its %s %w", s.field, err)
		}
		warn("tool %q: %s cleaned of invisible characters or HTML comments", t.Name, s.field)
		if raw, err = WithMember(raw, s.key, clean); err != nil {
			return nil, err
		}
	}
	return raw, nil
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

// boundedText cleans s and truncates it to max runes, warning (if warn is
// set) when it had to.
func boundedText(tool, field, s string, max int, warn func(string, ...any)) string {
	c := Clean(s)
	t, cut := truncate(c, max)
	if cut && warn != nil {
		warn("tool %q: %s truncated from %d to %d characters", tool, field, utf8.RuneCountInString(c), max)
	}
	return t
}

// prepareAnnotations encodes the tool's annotations as the SDK's struct
// has them, with a cleaned title (it is displayed like any title): the
// form the pins of Plexus before pass-through hashed, kept so that those
// pins still match (package pins holds the members it leaves out).
func prepareAnnotations(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	var c mcp.ToolAnnotations
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("are not valid: %w", err)
	}
	c.Title, _ = truncate(Clean(c.Title), maxTitle)
	return marshalCompact(&c)
}

// catalogSize is the size of the entries as a client receives them in
// tools/list: an upstream tool's definition as passed on, an operation
// rendered as an MCP tool.
func catalogSize(entries []Entry) int {
	n := 0
	for _, e := range entries {
		if e.Raw != nil {
			n += len(e.Raw) + len(e.Name)
			continue
		}
		b, err := json.Marshal(mcpTool(e))
		if err != nil {
			// Entries hold only strings and JSON this package produced.
			panic(fmt.Sprintf("catalog: encoding entry %s: %v", e.Name, err))
		}
		n += len(b)
	}
	return n
}

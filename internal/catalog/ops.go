package catalog

import (
	"cmp"
	"fmt"
	"strings"
)

// How much of a server's resource and prompt lists the operations' own
// descriptions show. The descriptions exist so a model knows what it can ask
// for; the complete lists are part of the catalog (R-CAT-2) and reach clients
// through resources/list and prompts/list, so a sample suffices here and
// keeps a server with thousands of resources from flooding the tool list.
const (
	maxListedResources = 20
	maxListedTemplates = 10
	maxListedPrompts   = 20
	maxListLine        = 200
	// maxPromptEnum is the most prompt names put in the schema's enum;
	// beyond that the enum costs more than it helps.
	maxPromptEnum = 50
)

func readResourceEntry(server string, resources []Resource, templates []Template,
	l Limits, warn func(string, ...any)) Entry {
	var b strings.Builder
	fmt.Fprintf(&b, "Read a resource of the MCP server %q by its URI.", server)

	var lines []string
	for _, r := range resources {
		lines = append(lines, listLine(r.URI, cmp.Or(r.Title, r.Name), r.Description))
	}
	writeList(&b, "Resources", lines, maxListedResources)

	lines = lines[:0]
	for _, t := range templates {
		lines = append(lines, listLine(t.URITemplate, cmp.Or(t.Title, t.Name), t.Description))
	}
	writeList(&b, "URI templates (RFC 6570; fill in the variables)", lines, maxListedTemplates)

	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"uri": map[string]any{
				"type":        "string",
				"description": "URI of the resource: one listed in this tool's description, one expanded from its URI templates, or one the server returned earlier.",
			},
		},
		"required":             []string{"uri"},
		"additionalProperties": false,
	}
	return opEntry(server, KindReadResource, "Read resource", b.String(), schema, l, warn)
}

func getPromptEntry(server string, prompts []Prompt, l Limits, warn func(string, ...any)) Entry {
	var b strings.Builder
	fmt.Fprintf(&b, "Get a prompt of the MCP server %q by name, filled in with its arguments.", server)

	// The prompts are parsePrompts's: valid names, each once.
	var names, lines []string
	for _, p := range prompts {
		names = append(names, p.Name)
		lines = append(lines, listLine(p.Name+promptArgs(p), p.Title, p.Description))
	}
	writeList(&b, "Prompts (required arguments marked *)", lines, maxListedPrompts)

	name := map[string]any{
		"type":        "string",
		"description": "Name of the prompt.",
	}
	if len(names) > 0 && len(names) <= maxPromptEnum {
		name["enum"] = names
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": name,
			"arguments": map[string]any{
				"type":                 "object",
				"description":          "The prompt's arguments, by name.",
				"additionalProperties": map[string]any{"type": "string"},
			},
		},
		"required":             []string{"name"},
		"additionalProperties": false,
	}
	return opEntry(server, KindGetPrompt, "Get prompt", b.String(), schema, l, warn)
}

func opEntry(server, op, title, desc string, schema map[string]any, l Limits, warn func(string, ...any)) Entry {
	in, err := marshalCompact(schema)
	if err != nil {
		// The schema is built above from strings only.
		panic(fmt.Sprintf("catalog: encoding %s schema: %v", op, err))
	}
	return Entry{
		Name:        OpName(server, op),
		Server:      server,
		Tool:        op,
		Title:       fmt.Sprintf("%s (%s)", title, server),
		Description: boundedText(op, "description", desc, l.MaxDescription, warn),
		InputSchema: in,
		Kind:        op,
	}
}

// promptArgs renders a prompt's arguments as "(a*, b)".
func promptArgs(p Prompt) string {
	var args []string
	for _, a := range p.Arguments {
		s := a.Name
		if a.Required {
			s += "*"
		}
		args = append(args, s)
	}
	if len(args) == 0 {
		return ""
	}
	return "(" + strings.Join(args, ", ") + ")"
}

// listLine renders one untrusted list item on one bounded line.
func listLine(id, title, desc string) string {
	s := id
	if title != "" {
		s += " — " + title
	}
	if desc != "" {
		s += ": " + desc
	}
	return oneLine(s, maxListLine)
}

func writeList(b *strings.Builder, heading string, lines []string, max int) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n\n%s:", heading)
	for i, line := range lines {
		if i == max {
			fmt.Fprintf(b, "\n- … and %d more", len(lines)-max)
			break
		}
		b.WriteString("\n- " + line)
	}
}

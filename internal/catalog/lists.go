package catalog

import (
	"encoding/json"
	"fmt"
)

// Lists are what one server offers, each tool, resource, resource template
// and prompt as the server wrote it (one JSON object each): a definition is
// kept as bytes, so that every member Plexus does not know of (a tool's
// _meta, the tasks extension's execution, an annotation of a newer spec)
// reaches clients as the server wrote it. Plexus reads only the few
// members it needs.
type Lists struct {
	Tools, Resources, Templates, Prompts []json.RawMessage
}

// Built is one server's prepared catalog.
type Built struct {
	// Entries are the tools Plexus offers and the per-server operations,
	// sorted by Name.
	Entries []Entry
	// Resources, Templates and Prompts are the server's, in its order,
	// each with the definition as the server wrote it.
	Resources []Resource
	Templates []Template
	Prompts   []Prompt
	// Listed are the names of every tool the server listed, those left
	// out (filtered, invalid) included, in its order.
	Listed []string
}

// Resource is one resource of a server: the members Plexus reads, and the
// definition as the server wrote it.
type Resource struct {
	Server      string
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Raw         json.RawMessage
}

// Template is one resource template of a server.
type Template struct {
	Server      string
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Raw         json.RawMessage
}

// Prompt is one prompt of a server.
type Prompt struct {
	Server      string
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	Raw         json.RawMessage
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// resourceFields are the members of a resource or template Plexus reads.
type resourceFields struct {
	URI         string `json:"uri"`
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	MIMEType    string `json:"mimeType"`
}

// parseResources reads a server's resources; one that is not an object
// with a URI is left out, saying why.
func parseResources(server string, raws []json.RawMessage, warn func(string, ...any)) []Resource {
	out := make([]Resource, 0, len(raws))
	for i, raw := range raws {
		var f resourceFields
		if err := json.Unmarshal(raw, &f); err != nil || f.URI == "" {
			warn("resource %d of the list is left out: %s", i+1, why(err, "it has no uri"))
			continue
		}
		out = append(out, Resource{Server: server, URI: f.URI, Name: f.Name, Title: f.Title,
			Description: f.Description, MIMEType: f.MIMEType, Raw: raw})
	}
	return out
}

// parseTemplates reads a server's resource templates.
func parseTemplates(server string, raws []json.RawMessage, warn func(string, ...any)) []Template {
	out := make([]Template, 0, len(raws))
	for i, raw := range raws {
		var f resourceFields
		if err := json.Unmarshal(raw, &f); err != nil || f.URITemplate == "" {
			warn("resource template %d of the list is left out: %s", i+1, why(err, "it has no uriTemplate"))
			continue
		}
		out = append(out, Template{Server: server, URITemplate: f.URITemplate, Name: f.Name, Title: f.Title,
			Description: f.Description, MIMEType: f.MIMEType, Raw: raw})
	}
	return out
}

// parsePrompts reads a server's prompts; one whose name Plexus could not
// send back exactly (invalidName), or a second of the same name, is left
// out.
func parsePrompts(server string, raws []json.RawMessage, warn func(string, ...any)) []Prompt {
	out := make([]Prompt, 0, len(raws))
	seen := map[string]bool{}
	for i, raw := range raws {
		var f struct {
			Name        string           `json:"name"`
			Title       string           `json:"title"`
			Description string           `json:"description"`
			Arguments   []PromptArgument `json:"arguments"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			warn("prompt %d of the list is left out: %s", i+1, why(err, ""))
			continue
		}
		if reason := invalidName(f.Name); reason != "" {
			warn("prompt %q is left out: its name %s", f.Name, reason)
			continue
		}
		if seen[f.Name] {
			warn("prompt %q is listed more than once; keeping the first", f.Name)
			continue
		}
		seen[f.Name] = true
		out = append(out, Prompt{Server: server, Name: f.Name, Title: f.Title, Description: f.Description,
			Arguments: f.Arguments, Raw: raw})
	}
	return out
}

// why words a definition's decoding error for a warning.
func why(err error, otherwise string) string {
	if err != nil {
		return fmt.Sprintf("it is not a valid definition (%v)", err)
	}
	return otherwise
}

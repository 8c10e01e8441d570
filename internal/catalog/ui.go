package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MCP Apps (the io.modelcontextprotocol/ui extension): a tool names its
// view, an HTML resource of the ui:// scheme, in its _meta — as
// ui.resourceUri, or under the older flat key "ui/resourceUri" — and the
// client reads that resource to show it. A profile that passes one server
// on (bare) passes both as the server wrote them. A profile that gathers
// several servers renames each server's ui:// resources (UIURI) and the
// tools' references to them alike, so that two servers' views never meet
// under one URI and every view stays readable.

// UIScheme is the scheme of MCP Apps views.
const UIScheme = "ui://"

// metaUI and metaUIFlat are where a tool's _meta names its view.
const (
	metaUI       = "ui"
	metaUIURI    = "resourceUri"
	metaUIFlat   = "ui/resourceUri"
	metaKeyEntry = "_meta"
)

// UIURI is the URI under which a profile that gathers several servers
// offers server's resource uri: ui://SERVER/REST for ui://REST. Any URI of
// another scheme is its own.
func UIURI(server, uri string) string {
	rest, ok := strings.CutPrefix(uri, UIScheme)
	if !ok {
		return uri
	}
	return UIScheme + server + "/" + rest
}

// ParseUIURI is the inverse of UIURI: the server and its own URI behind a
// renamed ui:// URI. Server names have no "/" (R-CFG-2), so the first
// path segment is the server.
func ParseUIURI(uri string) (server, own string, ok bool) {
	rest, ok := strings.CutPrefix(uri, UIScheme)
	if !ok {
		return "", "", false
	}
	server, rest, ok = strings.Cut(rest, "/")
	if !ok || server == "" {
		return "", "", false
	}
	return server, UIScheme + rest, true
}

// UIResourceURIs returns the ui:// resources a tool's definition names as
// its views, each once, in the order ui.resourceUri, ui/resourceUri.
func UIResourceURIs(raw json.RawMessage) []string {
	var def struct {
		Meta struct {
			UI struct {
				ResourceURI any `json:"resourceUri"`
			} `json:"ui"`
			Flat any `json:"ui/resourceUri"`
		} `json:"_meta"`
	}
	if json.Unmarshal(raw, &def) != nil {
		return nil
	}
	var out []string
	for _, v := range []any{def.Meta.UI.ResourceURI, def.Meta.Flat} {
		if s, ok := v.(string); ok && strings.HasPrefix(s, UIScheme) && (len(out) == 0 || out[0] != s) {
			out = append(out, s)
		}
	}
	return out
}

// WithUIURIs returns a tool's definition whose references to its ui://
// views (UIResourceURIs) are replaced by rename's; every other byte as in
// raw, which is returned itself when it names no view.
func WithUIURIs(raw json.RawMessage, rename func(uri string) string) (json.RawMessage, error) {
	if len(UIResourceURIs(raw)) == 0 {
		return raw, nil
	}
	meta, _ := Member(raw, metaKeyEntry)
	renamed := func(v json.RawMessage) (json.RawMessage, bool) {
		var s string
		if json.Unmarshal(v, &s) != nil || !strings.HasPrefix(s, UIScheme) {
			return nil, false
		}
		out, err := marshalCompact(rename(s))
		return out, err == nil
	}
	var err error
	if ui, ok := Member(meta, metaUI); ok {
		if v, ok := Member(ui, metaUIURI); ok {
			if nv, ok := renamed(v); ok {
				if ui, err = WithMember(ui, metaUIURI, nv); err != nil {
					return nil, err
				}
				if meta, err = WithMember(meta, metaUI, ui); err != nil {
					return nil, err
				}
			}
		}
	}
	if v, ok := Member(meta, metaUIFlat); ok {
		if nv, ok := renamed(v); ok {
			if meta, err = WithMember(meta, metaUIFlat, nv); err != nil {
				return nil, err
			}
		}
	}
	out, err := WithMember(raw, metaKeyEntry, meta)
	if err != nil {
		return nil, fmt.Errorf("renaming a tool's views: %w", err)
	}
	return out, nil
}

// Offered is the definition of an upstream tool as a profile offers it
// under name: the server's own (Raw) renamed; in a profile that gathers
// several servers (aggregate), its ui:// views renamed too (UIURI).
func (e Entry) Offered(name string, aggregate bool) (json.RawMessage, error) {
	if e.Raw == nil {
		return nil, fmt.Errorf("%s is not an upstream tool", e.Name)
	}
	raw, err := WithName(e.Raw, name)
	if err != nil || !aggregate {
		return raw, err
	}
	return WithUIURIs(raw, func(uri string) string { return UIURI(e.Server, uri) })
}

// Offered is the definition of a resource as a profile offers it: the
// server's own, with a ui:// URI renamed (UIURI) in a profile that
// gathers several servers.
func (r Resource) Offered(aggregate bool) (json.RawMessage, error) {
	if !aggregate || !strings.HasPrefix(r.URI, UIScheme) {
		return r.Raw, nil
	}
	return withString(r.Raw, "uri", UIURI(r.Server, r.URI))
}

// Offered is the definition of a resource template as a profile offers
// it, as Resource.Offered.
func (t Template) Offered(aggregate bool) (json.RawMessage, error) {
	if !aggregate || !strings.HasPrefix(t.URITemplate, UIScheme) {
		return t.Raw, nil
	}
	return withString(t.Raw, "uriTemplate", UIURI(t.Server, t.URITemplate))
}

// Offered is the definition of a prompt as a profile offers it under
// name, every other byte the server's.
func (p Prompt) Offered(name string) (json.RawMessage, error) {
	return WithName(p.Raw, name)
}

// WithContentURIs returns a resources/read result whose contents' ui://
// URIs are replaced by rename's (so that a view read under its renamed
// URI comes back under that URI); every other byte as in result, which is
// returned itself when it has none.
func WithContentURIs(result json.RawMessage, rename func(uri string) string) (json.RawMessage, error) {
	contents, ok := Member(result, "contents")
	if !ok {
		return result, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(contents, &items) != nil {
		return result, nil
	}
	changed := false
	for i, item := range items {
		v, ok := Member(item, "uri")
		var uri string
		if !ok || json.Unmarshal(v, &uri) != nil || !strings.HasPrefix(uri, UIScheme) {
			continue
		}
		nv, err := withString(item, "uri", rename(uri))
		if err != nil {
			return nil, err
		}
		items[i], changed = nv, true
	}
	if !changed {
		return result, nil
	}
	list, err := marshalCompact(items)
	if err != nil {
		return nil, err
	}
	return WithMember(result, "contents", list)
}

package face

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// The lists a profile offers — tools, resources, resource templates,
// prompts — as clients read them: each definition the bytes the server
// wrote (pass-through by construction), renamed only where the
// profile's naming must (catalog's Offered), in the server's order in a
// profile of one server's names (bare) and by name in one that gathers
// servers. Each list's pages are rendered once per change, in both eras,
// and a request answered with a page's bytes and its id: a 5,000-tool list
// is 1.4 MB of JSON. The SDK's server keeps its own registrations for what
// it serves (reading a resource, getting a prompt, the list_changed it
// sends), never the lists.

// listKind is one of a profile's lists.
type listKind int

const (
	toolsList listKind = iota
	resourcesList
	templatesList
	promptsList
)

// listKinds are each list's method and the member of its result.
var listKinds = [...]struct{ method, member string }{
	toolsList:     {"tools/list", "tools"},
	resourcesList: {"resources/list", "resources"},
	templatesList: {"resources/templates/list", "resourceTemplates"},
	promptsList:   {"prompts/list", "prompts"},
}

// kindOf is the list a method lists; false for any other method.
func kindOf(method string) (listKind, bool) {
	for k, l := range listKinds {
		if l.method == method {
			return listKind(k), true
		}
	}
	return 0, false
}

// listPageSize is the lists' page size, the SDK's default.
const listPageSize = mcp.DefaultPageSize

// offered is one list as the profile offers it. Its definitions change
// under the profile's syncMu; its pages are rendered after a change, at
// the next request or the next sync.
type offered struct {
	defs map[string]offeredDef // by key: a tool's or prompt's name, a resource's URI, a template's
	gen  uint64                // counts the changes

	render sync.Mutex
	pages  atomic.Pointer[renderedList] // nil: not rendered since the last change
}

// offeredDef is one definition of a list: its place (lower first, then
// by key) and its bytes.
type offeredDef struct {
	rank int
	raw  json.RawMessage
}

// put offers def under key; the caller holds syncMu. It reports whether
// the list changed.
func (o *offered) put(key string, rank int, raw json.RawMessage) bool {
	if d, ok := o.defs[key]; ok && d.rank == rank && bytes.Equal(d.raw, raw) {
		return false
	}
	if o.defs == nil {
		o.defs = map[string]offeredDef{}
	}
	o.defs[key] = offeredDef{rank, raw}
	o.changed()
	return true
}

// drop withdraws key; the caller holds syncMu.
func (o *offered) drop(key string) {
	if _, ok := o.defs[key]; ok {
		delete(o.defs, key)
		o.changed()
	}
}

func (o *offered) changed() {
	o.gen++
	o.pages.Store(nil)
}

// rendered returns the list's pages, rendering them if it changed since;
// nil if they cannot be rendered.
func (p *profile) rendered(k listKind) *renderedList {
	o := &p.lists[k]
	if rl := o.pages.Load(); rl != nil {
		return rl
	}
	o.render.Lock()
	defer o.render.Unlock()
	if rl := o.pages.Load(); rl != nil {
		return rl
	}
	// Waits for a sync under way: its list is the one to serve.
	p.syncMu.Lock()
	gen := o.gen
	keys := slices.SortedFunc(maps.Keys(o.defs), func(a, b string) int {
		return cmp.Or(cmp.Compare(o.defs[a].rank, o.defs[b].rank), cmp.Compare(a, b))
	})
	defs := make([]json.RawMessage, len(keys))
	for i, key := range keys {
		defs[i] = o.defs[key].raw
	}
	p.syncMu.Unlock()
	rl, err := renderList(k, keys, defs, p.pageSize, p.f.impl())
	if err != nil {
		p.f.log.Warn("face: a list's pages not rendered; the SDK serves it", "profile", p.name, "list", listKinds[k].method, "err", err)
		return nil
	}
	p.syncMu.Lock()
	if o.gen == gen {
		o.pages.Store(rl)
	}
	p.syncMu.Unlock()
	return rl
}

// renderedList is one rendering of a list.
type renderedList struct {
	kind  listKind
	keys  []string          // in the list's order
	defs  []json.RawMessage // the same order
	at    map[string]int    // a key → its place
	pages []renderedPage    // page i starts at i*size
	size  int
	impl  *mcp.Implementation
}

// renderedPage is the JSON-RPC result of one page in each era: MCP
// 2026-07-28 marks it complete and names the server in its _meta.
type renderedPage struct {
	session, stateless []byte
}

// renderList renders defs (keys in the same order) in pages of size.
func renderList(k listKind, keys []string, defs []json.RawMessage, size int, impl *mcp.Implementation) (*renderedList, error) {
	rl := &renderedList{kind: k, keys: keys, defs: defs, at: make(map[string]int, len(keys)), size: size, impl: impl}
	for i, key := range keys {
		rl.at[key] = i
	}
	for start := 0; start == 0 || start < len(defs); start += size {
		page, err := rl.render(start)
		if err != nil {
			return nil, err
		}
		rl.pages = append(rl.pages, page)
	}
	return rl, nil
}

// render renders the page that starts at place start.
func (rl *renderedList) render(start int) (renderedPage, error) {
	start = min(start, len(rl.defs))
	end := min(start+rl.size, len(rl.defs))
	next := ""
	if end < len(rl.defs) {
		next = encodeCursor(rl.keys[end-1])
	}
	return renderPage(rl.kind, rl.defs[start:end], next, rl.impl)
}

// page is the result of the page a cursor asks for, in a client's era: ""
// the first; a cursor of this list names the key listed last, and pages on
// from it even once the list changed (a page rendered then and there).
func (rl *renderedList) page(cursor string, stateless bool) ([]byte, error) {
	start := 0
	if cursor != "" {
		key, ok := decodeCursor(cursor)
		at, known := rl.at[key]
		if !ok || !known {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor (the list may have changed since: list it again)"}
		}
		start = at + 1
	}
	var page renderedPage
	if start%rl.size == 0 && start/rl.size < len(rl.pages) {
		page = rl.pages[start/rl.size]
	} else {
		var err error
		if page, err = rl.render(start); err != nil {
			return nil, err
		}
	}
	if stateless {
		return page.stateless, nil
	}
	return page.session, nil
}

// renderPage renders one page of definitions, with the cursor of the next
// (or "").
func renderPage(k listKind, defs []json.RawMessage, next string, impl *mcp.Implementation) (renderedPage, error) {
	n := 2
	for _, d := range defs {
		n += len(d) + 1
	}
	array := make([]byte, 0, n)
	array = append(array, '[')
	for i, d := range defs {
		if i > 0 {
			array = append(array, ',')
		}
		array = append(array, d...)
	}
	array = append(array, ']')
	var page renderedPage
	var err error
	if page.session, err = splice(k, next, nil, array); err != nil {
		return page, err
	}
	page.session = era.ForClient(era.Latest, page.session)
	page.stateless, err = splice(k, next, impl, array)
	return page, err
}

// splice renders a list's result as the SDK's server writes it — in the
// stateless era (impl set) marked complete and naming the server — with
// array as its items, encoded once for both eras.
func splice(k listKind, next string, impl *mcp.Implementation, array []byte) ([]byte, error) {
	var res any
	switch k {
	case toolsList:
		r := &mcp.ListToolsResult{NextCursor: next, Tools: []*mcp.Tool{}}
		r.CacheScope = "public"
		if impl != nil {
			r.ResultType, r.Meta = "complete", mcp.Meta{mcp.MetaKeyServerInfo: impl}
		}
		res = r
	case resourcesList:
		r := &mcp.ListResourcesResult{NextCursor: next, Resources: []*mcp.Resource{}}
		r.CacheScope = "public"
		if impl != nil {
			r.ResultType, r.Meta = "complete", mcp.Meta{mcp.MetaKeyServerInfo: impl}
		}
		res = r
	case templatesList:
		r := &mcp.ListResourceTemplatesResult{NextCursor: next, ResourceTemplates: []*mcp.ResourceTemplate{}}
		r.CacheScope = "public"
		if impl != nil {
			r.ResultType, r.Meta = "complete", mcp.Meta{mcp.MetaKeyServerInfo: impl}
		}
		res = r
	case promptsList:
		r := &mcp.ListPromptsResult{NextCursor: next, Prompts: []*mcp.Prompt{}}
		r.CacheScope = "public"
		if impl != nil {
			r.ResultType, r.Meta = "complete", mcp.Meta{mcp.MetaKeyServerInfo: impl}
		}
		res = r
	}
	env, err := marshalSDK(res)
	if err != nil {
		return nil, err
	}
	empty := []byte(`"` + listKinds[k].member + `":[]`)
	i := bytes.LastIndex(env, empty)
	if i < 0 {
		return nil, fmt.Errorf("%s result renders as %.80q…, without its items", listKinds[k].method, env)
	}
	out := make([]byte, 0, len(env)+len(array))
	out = append(out, env[:i+len(empty)-2]...)
	out = append(out, array...)
	return append(out, env[i+len(empty):]...), nil
}

// encodeCursor is the cursor of the page after the one key ends.
func encodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

func decodeCursor(cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	return string(b), err == nil
}

// marshalSDK encodes v as the SDK's JSON-RPC layer does: without HTML
// escaping.
func marshalSDK(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

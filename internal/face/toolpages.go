package face

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// The tools/list pages of a profile, rendered once per change: a
// 5,000-tool list is 1.4 MB of JSON, which the SDK encodes twice on every
// request. The profile records every tool it gives its SDK server (addTool,
// removeTools), so the record and the SDK's list are one: listpages.go
// serves tools/list from the pages rendered from it, the SDK serves every
// other request and any tools/list this path is not sure of.

// listPageSize is the tools/list page size (profile.pageSize), the SDK
// server's too, so that a cursor from either path pages the same way.
const listPageSize = mcp.DefaultPageSize

// addTool offers t to clients. The caller holds syncMu (or owns p alone).
func (p *profile) addTool(t *mcp.Tool, h mcp.ToolHandler) {
	p.listChangedLocked()
	p.srv.AddTool(t, h)
	p.offer[t.Name] = t
}

// removeTools withdraws tools. The caller holds syncMu.
func (p *profile) removeTools(names ...string) {
	p.listChangedLocked()
	p.srv.RemoveTools(names...)
	for _, n := range names {
		delete(p.offer, n)
	}
}

// listChangedLocked drops the rendered pages before the SDK's list changes
// (the SDK tells clients ~10 ms after, and sync may take longer): the next
// tools/list renders them anew, after sync.
func (p *profile) listChangedLocked() {
	p.listGen++
	p.pages.Store(nil)
}

// toolPages returns the rendered pages, rendering them if the list changed
// since; nil if they cannot be rendered (the SDK serves the list then).
func (p *profile) toolPages() *toolPages {
	if tp := p.pages.Load(); tp != nil {
		return tp
	}
	p.renderMu.Lock()
	defer p.renderMu.Unlock()
	if tp := p.pages.Load(); tp != nil {
		return tp
	}
	// Waits for a sync under way: its list is the one to serve.
	p.syncMu.Lock()
	gen := p.listGen
	tools := make([]*mcp.Tool, 0, len(p.offer))
	for _, name := range slices.Sorted(maps.Keys(p.offer)) {
		tools = append(tools, p.offer[name])
	}
	p.syncMu.Unlock()
	tp, err := renderToolPages(tools, p.pageSize, p.f.impl())
	if err != nil {
		p.f.log.Warn("face: tools/list pages not rendered; the SDK serves them", "profile", p.name, "err", err)
		return nil
	}
	p.syncMu.Lock()
	if p.listGen == gen {
		p.pages.Store(tp)
	}
	p.syncMu.Unlock()
	return tp
}

// toolPages is one rendering of a profile's tools/list.
type toolPages struct {
	pages    []toolPage
	byCursor map[string]int // a cursor handed out → the index of its page; "" is the first
}

// toolPage is the JSON-RPC result of one page, as the SDK writes it in each
// protocol era: MCP 2026-07-28 marks it complete and names the server in
// its _meta.
type toolPage struct {
	session, stateless []byte
}

// renderToolPages renders tools (sorted by name, as the SDK lists them) in
// pages of size as the SDK's tools/list renders them.
func renderToolPages(tools []*mcp.Tool, size int, impl *mcp.Implementation) (*toolPages, error) {
	tp := &toolPages{byCursor: map[string]int{"": 0}}
	for start := 0; start == 0 || start < len(tools); start += size {
		page := tools[start:min(start+size, len(tools))]
		var next string
		if start+size < len(tools) {
			c, err := encodeCursor(page[len(page)-1].Name)
			if err != nil {
				return nil, err
			}
			next = c
			tp.byCursor[next] = len(tp.pages) + 1
		}
		array, err := marshalSDK(page)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			array = []byte(`[]`) // not null
		}
		res := &mcp.ListToolsResult{NextCursor: next, Tools: []*mcp.Tool{}}
		res.CacheScope = "public" // the SDK's default, always on the wire
		var tpage toolPage
		if tpage.session, err = spliceTools(res, array); err != nil {
			return nil, err
		}
		tpage.session = era.ForClient(era.Latest, tpage.session)
		res.ResultType = "complete"
		res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: impl}
		if tpage.stateless, err = spliceTools(res, array); err != nil {
			return nil, err
		}
		tp.pages = append(tp.pages, tpage)
	}
	return tp, nil
}

// spliceTools renders res (with no tools) and puts the rendered tools array
// in, so that the tools are encoded once for both eras.
func spliceTools(res *mcp.ListToolsResult, array []byte) ([]byte, error) {
	env, err := marshalSDK(res)
	if err != nil {
		return nil, err
	}
	const empty = `"tools":[]}`
	if !bytes.HasSuffix(env, []byte(empty)) {
		return nil, fmt.Errorf("tools/list result renders as %.80q…, not ending in its tools", env)
	}
	out := make([]byte, 0, len(env)+len(array))
	out = append(out, env[:len(env)-len(`[]}`)]...)
	out = append(out, array...)
	return append(out, '}'), nil
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

// pageToken and encodeCursor are the SDK's cursor: a gob of the last name
// listed, base64. Gob numbers types per process, so the bytes are not the
// SDK's, but the SDK reads them (toolpages_test.go holds it so). This path
// knows only the cursors it handed out: any other (the SDK's, a stale or a
// bad one) goes to the SDK; it decodes no client's gob.
type pageToken struct {
	LastUID string
}

func encodeCursor(lastName string) (string, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(pageToken{LastUID: lastName}); err != nil {
		return "", fmt.Errorf("encoding a page cursor: %w", err)
	}
	return base64.URLEncoding.EncodeToString(buf.Bytes()), nil
}

// page returns the index of the page a cursor asks for.
func (tp *toolPages) page(cursor string) (int, bool) {
	i, ok := tp.byCursor[cursor]
	return i, ok
}

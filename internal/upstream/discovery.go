package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPages bounds one listing: a server that pages forever is broken.
const maxPages = 1000

// Refresh lists everything the server offers again, following pagination to
// the end, and makes it the new Discovery. Only the kinds whose capability the
// server advertises are listed.
func (c *Conn) Refresh(ctx context.Context) (Discovery, error) {
	if err := c.usable(); err != nil {
		return Discovery{}, err
	}
	if phase, err := c.refresh(ctx); err != nil {
		return Discovery{}, fmt.Errorf("server %q: %s: %w", c.name, phase, c.callError(ctx, err))
	}
	return c.Discovery(), nil
}

// refresh does the listing; on failure it says which phase failed. The
// kinds are listed at once (a round trip each, not four in a row: most of
// a server's start after its handshake); a failure is reported for the
// first phase in the order tools, resources, templates, prompts.
func (c *Conn) refresh(ctx context.Context) (phase string, err error) {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	cs, caps := c.session, c.Capabilities()
	var d Discovery
	var wg sync.WaitGroup
	errs := make([]error, 4)
	if caps.Tools != nil {
		wg.Go(func() {
			d.Tools, errs[0] = listAll(ctx, func(cursor string) ([]*mcp.Tool, string, error) {
				r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.Tools, r.NextCursor, nil
			})
		})
	}
	if caps.Resources != nil {
		wg.Go(func() {
			d.Resources, errs[1] = listAll(ctx, func(cursor string) ([]*mcp.Resource, string, error) {
				r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.Resources, r.NextCursor, nil
			})
		})
		wg.Go(func() {
			d.ResourceTemplates, errs[2] = listAll(ctx, func(cursor string) ([]*mcp.ResourceTemplate, string, error) {
				r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.ResourceTemplates, r.NextCursor, nil
			})
		})
	}
	if caps.Prompts != nil {
		wg.Go(func() {
			d.Prompts, errs[3] = listAll(ctx, func(cursor string) ([]*mcp.Prompt, string, error) {
				r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.Prompts, r.NextCursor, nil
			})
		})
	}
	wg.Wait()
	for i, phase := range []string{"listing tools", "listing resources", "listing resource templates", "listing prompts"} {
		if errs[i] != nil {
			return phase, errs[i]
		}
	}
	schemasAsJSON(d.Tools)
	c.mu.Lock()
	c.disc = d
	c.mu.Unlock()
	return "", nil
}

// schemasAsJSON keeps each tool's input and output schema as the JSON the
// SDK decoded it from, not as the Go maps it decoded it into. A server's
// list is kept for as long as the server runs, and its schemas are most of
// it: as maps they take several times their JSON's size (about 1.6 KiB a
// tool of the go-sdk test server's, against some 200 bytes of JSON). The
// one reader of a schema, the catalog, encodes it anyway (catalog.Build).
// A schema that does not encode is left as it is, for the catalog to
// report.
func schemasAsJSON(tools []*mcp.Tool) {
	for _, t := range tools {
		t.InputSchema = asJSON(t.InputSchema)
		t.OutputSchema = asJSON(t.OutputSchema)
	}
}

// asJSON encodes v compactly with its keys sorted and without HTML
// escaping, the form catalog.Build gives schemas: the catalog's entries
// then share these bytes instead of keeping their own.
func asJSON(v any) any {
	switch v.(type) {
	case nil, json.RawMessage:
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return v
	}
	// A copy of its length: the buffer has grown past it, and this is kept.
	return json.RawMessage(bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))))
}

// listAll fetches pages until the server returns no cursor. It is our own loop
// rather than the SDK's iterators so that a server repeating a cursor (which
// would loop forever) or paging without end is an error. Cursors are only
// compared, never parsed (MCP pagination: "Clients MUST treat cursors as
// opaque tokens").
func listAll[T any](ctx context.Context, page func(cursor string) ([]T, string, error)) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		items, next, err := page(cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("server repeated pagination cursor %q", clip(next, 64))
		}
		seen[next] = true
		cursor = next
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("server returned more than %d pages", maxPages)
}

// clip bounds a string from the server before it goes into an error.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// maxPages bounds one listing: a server that pages forever is broken.
const maxPages = 1000

// Discovery is what a server offered at the last listing: each tool,
// resource, resource template and prompt as the server wrote it, one JSON
// value each, so that whatever Plexus does not know of a definition (its
// _meta, annotations of a newer spec, the tasks extension's execution) is
// kept to be passed on. Its slices are shared: treat them as read-only.
type Discovery struct {
	Tools             []json.RawMessage
	Resources         []json.RawMessage
	ResourceTemplates []json.RawMessage
	Prompts           []json.RawMessage
	// Warnings name the lists the server refused to give, which are
	// empty: a server that answers resources/templates/list with "method
	// not found" works all the same, as it does for a client directly.
	Warnings []string
}

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

// A list and where a page of it keeps its items.
type listKind struct {
	method, member, phase string
}

var (
	listTools     = listKind{"tools/list", "tools", "listing tools"}
	listResources = listKind{"resources/list", "resources", "listing resources"}
	listTemplates = listKind{"resources/templates/list", "resourceTemplates", "listing resource templates"}
	listPrompts   = listKind{"prompts/list", "prompts", "listing prompts"}
)

// refresh does the listing; on failure it says which phase failed. The
// kinds are listed at once (a round trip each, not four in a row: most of
// a server's start after its handshake); a failure is reported for the
// first phase in the order tools, resources, templates, prompts.
//
// Each list is asked for with a request of Plexus's own and its items are
// kept as the bytes they came in: decoded into the SDK's structs and
// encoded again, they would lose every member the structs do not model.
// A list the server answers with a JSON-RPC error (or over HTTP with a
// refusal, keepalive.go) is taken as empty, with a warning; a list that
// gets no answer fails the listing.
func (c *Conn) refresh(ctx context.Context) (phase string, err error) {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	caps := c.Capabilities()
	var d Discovery
	kinds := []struct {
		kind listKind
		on   bool
		into *[]json.RawMessage
	}{
		{listTools, caps.Tools != nil, &d.Tools},
		{listResources, caps.Resources != nil, &d.Resources},
		{listTemplates, caps.Resources != nil, &d.ResourceTemplates},
		{listPrompts, caps.Prompts != nil, &d.Prompts},
	}
	errs := make([]error, len(kinds))
	refused := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, k := range kinds {
		if !k.on {
			continue
		}
		wg.Go(func() {
			items, err := c.list(ctx, k.kind)
			switch {
			case err == nil:
				*k.into = items
			case serverAnswered(err):
				refused[i] = err
			default:
				errs[i] = err
			}
		})
	}
	wg.Wait()
	for i, k := range kinds {
		if errs[i] != nil {
			return k.kind.phase, errs[i]
		}
	}
	for i, k := range kinds {
		if refused[i] == nil {
			continue
		}
		msg := c.redact.Error(refused[i]).Error()
		c.log.Warn("server refused a list; it is taken as empty", "list", k.kind.method, "err", msg)
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s was refused, so the server offers none: %s", k.kind.method, clip(msg, 300)))
	}
	c.mu.Lock()
	c.disc = d
	c.mu.Unlock()
	return "", nil
}

// list fetches every page of one list, with Plexus's own requests.
func (c *Conn) list(ctx context.Context, k listKind) ([]json.RawMessage, error) {
	return listAll(ctx, func(cursor string) ([]json.RawMessage, string, error) {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if m := c.eraMeta(); m != nil {
			params["_meta"] = m
		}
		res, err := c.request(ctx, k.method, params)
		if err != nil {
			return nil, "", err
		}
		items, next, err := listPage(res, k.member)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", k.method, err)
		}
		return items, next, nil
	})
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

// listPage reads one page of a list result: its items, each a copy of the
// bytes the server wrote, and the next cursor. An item that is not a JSON
// object is kept for the catalog to report.
func listPage(res json.RawMessage, member string) (items []json.RawMessage, next string, err error) {
	var page map[string]json.RawMessage
	if err := json.Unmarshal(res, &page); err != nil {
		return nil, "", fmt.Errorf("the result is not a JSON object: %w", err)
	}
	if raw, ok := page[member]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, "", fmt.Errorf("%s is not an array: %w", member, err)
		}
	}
	if raw, ok := page["nextCursor"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &next); err != nil {
			return nil, "", fmt.Errorf("nextCursor is not a string: %w", err)
		}
	}
	return items, next, nil
}

// clip bounds a string from the server before it goes into an error.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

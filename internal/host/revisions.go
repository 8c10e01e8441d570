package host

import (
	"context"
	"fmt"

	"github.com/plexus-mcp/plexus/internal/store"
)

// Revisions lists the kept versions of extensions.json, newest first:
// every save keeps the version it replaces (store.RevisionsDir).
func (h *Host) Revisions() ([]store.Revision, error) {
	return h.opts.Store.Revisions()
}

// RestoreRevision puts a kept version back as extensions.json (keeping the
// current one as a revision) and applies it as Reload does. A version that
// does not decode is restored to the file but not applied: the error lists
// its problems, and the servers keep the settings they had.
func (h *Host) RestoreRevision(ctx context.Context, name string) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	data, err := h.opts.Store.RevisionData(name)
	if err != nil {
		return 0, &NotFoundError{What: "revision", Name: name}
	}
	if err := h.opts.Store.ReplaceConfigFile(data); err != nil {
		return 0, err
	}
	rev, err := h.reload(ctx)
	if err != nil {
		return 0, fmt.Errorf("revision %s is back in extensions.json but was not applied: %w", name, err)
	}
	return rev, nil
}

// DiscardHandEdits puts extensions.json back as the daemon last read or
// wrote it, keeping the edited file as a revision.
func (h *Host) DiscardHandEdits() (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if err := h.opts.Store.DiscardHandEdits(); err != nil {
		return 0, err
	}
	return h.opts.Store.Config().Revision, nil
}

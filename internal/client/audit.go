package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Audit returns the newest records of the audit log that pass q's filter
// (kind, server, tool, member, outcome, since, limit), oldest first.
func (c *Client) Audit(ctx context.Context, q url.Values) (*apitype.AuditRecords, error) {
	var out apitype.AuditRecords
	if err := c.do(ctx, request{method: http.MethodGet, path: "/audit?" + q.Encode()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AuditStream is an open GET /v1/audit/follow: the records written from
// when it opened, as they are written.
type AuditStream struct{ s *EventStream }

// FollowAudit opens the stream of new audit records that pass q's filter.
// It returns once the daemon has answered: a record written after it
// returns is in the stream.
func (c *Client) FollowAudit(ctx context.Context, q url.Values) (*AuditStream, error) {
	s, err := c.eventStream(ctx, "/audit/follow?"+q.Encode())
	if err != nil {
		return nil, err
	}
	return &AuditStream{s}, nil
}

// Next returns the next record, waiting for it; errors as
// EventStream.Next's.
func (a *AuditStream) Next() (apitype.AuditRecord, error) {
	se, err := a.s.next()
	if err != nil {
		return apitype.AuditRecord{}, err
	}
	var r apitype.AuditRecord
	if err := json.Unmarshal([]byte(se.Data), &r); err != nil {
		return r, fmt.Errorf("decoding an audit record from the daemon: %w", err)
	}
	return r, nil
}

// Close ends the stream.
func (a *AuditStream) Close() error { return a.s.Close() }

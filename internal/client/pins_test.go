package client

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

func TestAcceptApprove(t *testing.T) {
	f := startFake(t, map[string]canned{
		"POST /v1/servers/my%20docs/accept":  {200, `{"accepted":["search"],"server":{"name":"my docs","state":"ready","tools":2}}`},
		"POST /v1/servers/my%20docs/approve": {200, `{"revision":4,"server":{"name":"my docs","state":"ready","tools":2}}`},
		"POST /v1/servers/other/approve":     {409, `{"error":{"code":"conflict","message":"the definition of server other changed again since it was shown: nothing was approved","hint":"review"}}`},
	})
	c := New(f.home)
	res, err := c.Accept(t.Context(), "my docs", apitype.AcceptRequest{Tools: []string{"search"}, Hashes: map[string]string{"search": "sha256:ab"}})
	if err != nil || len(res.Accepted) != 1 || res.Server == nil || res.Server.Tools != 2 {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	var sent apitype.AcceptRequest
	if err := json.Unmarshal([]byte(f.last(t).Body), &sent); err != nil || sent.Tools[0] != "search" || sent.Hashes["search"] != "sha256:ab" || sent.All {
		t.Errorf("sent %s", f.last(t).Body)
	}

	wr, err := c.Approve(t.Context(), "my docs", "sha256:cd")
	if err != nil || wr.Revision != 4 || wr.Server.State != "ready" {
		t.Fatalf("Approve = %+v, %v", wr, err)
	}
	if body := f.last(t).Body; body != `{"key":"sha256:cd"}` {
		t.Errorf("sent %s", body)
	}
	_, err = c.Approve(t.Context(), "other", "")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Body.Code != apitype.CodeConflict {
		t.Errorf("Approve conflict = %v", err)
	}
	if body := f.last(t).Body; body != `{}` {
		t.Errorf("an approval without a key sent %s", body)
	}
}

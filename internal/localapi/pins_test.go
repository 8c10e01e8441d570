package localapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestAcceptApproveRoutes checks the request handling of the pinning
// routes; the decisions themselves are tested in host and pins.
func TestAcceptApproveRoutes(t *testing.T) {
	_, c := serve(t)
	resp := do(t, c, "POST", "/v1/servers", `{"name":"x","config":{"type":"stdio","command":"/bin/true","enabled":false},"noVerify":true}`)
	if resp.StatusCode != 201 {
		t.Fatalf("add: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		path, body string
		status     int
		code, want string
	}{
		{"/v1/servers/x/accept", `{}`, 400, apitype.CodeBadRequest, "name the tools"},
		{"/v1/servers/x/accept", `{"tools":["a"],"all":true}`, 400, apitype.CodeBadRequest, "not both"},
		{"/v1/servers/x/accept", `{"tools":["a"],"colour":1}`, 400, apitype.CodeBadRequest, "unknown field"},
		{"/v1/servers/x/accept", `{"tools":["a"]}`, 404, apitype.CodeNotFound, `offers no tool named "a"`},
		{"/v1/servers/nope/accept", `{"all":true}`, 404, apitype.CodeNotFound, `no server named "nope"`},
		{"/v1/servers/nope/approve", `{}`, 404, apitype.CodeNotFound, `no server named "nope"`},
		{"/v1/servers/x/approve", `{"key":"sha256:00"}`, 409, apitype.CodeConflict, "changed again"},
	} {
		resp := do(t, c, "POST", tc.path, tc.body)
		if resp.StatusCode != tc.status {
			t.Errorf("POST %s %s: status %d, want %d", tc.path, tc.body, resp.StatusCode, tc.status)
		}
		if e := decodeError(t, resp); e.Code != tc.code || !strings.Contains(e.Message, tc.want) {
			t.Errorf("POST %s %s: %+v, want code %s and %q", tc.path, tc.body, e, tc.code, tc.want)
		}
	}

	resp = do(t, c, "POST", "/v1/servers/x/accept", `{"all":true}`)
	var ar apitype.AcceptResult
	if err := json.NewDecoder(resp.Body).Decode(&ar); err != nil || resp.StatusCode != 200 || ar.Accepted == nil || len(ar.Accepted) != 0 || ar.Server == nil {
		t.Errorf("accept all with nothing held: %d %+v %v", resp.StatusCode, ar, err)
	}
	resp = do(t, c, "POST", "/v1/servers/x/approve", `{}`)
	var wr apitype.WriteResult
	if err := json.NewDecoder(resp.Body).Decode(&wr); err != nil || resp.StatusCode != 200 || wr.Server == nil || wr.Server.NeedsApproval {
		t.Errorf("approve of an approved server: %d %+v %v", resp.StatusCode, wr, err)
	}
}

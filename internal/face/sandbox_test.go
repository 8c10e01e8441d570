package face

import (
	"encoding/json"
	"testing"
)

func TestAgentServersGetStrictSandbox(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"stdio","command":"npx","args":["-y","pkg"]}`, `{"args":["-y","pkg"],"command":"npx","sandbox":{"filesystem":{},"network":"none"},"type":"stdio"}`},
		{`{"type":"stdio","command":"x","sandbox":{"network":"all"}}`, `{"type":"stdio","command":"x","sandbox":{"network":"all"}}`},
		{`{"type":"http","url":"https://h/"}`, `{"type":"http","url":"https://h/"}`},
		{`not json`, `not json`},
	} {
		got := string(withStrictSandbox(json.RawMessage(tc.in)))
		if got != tc.want {
			t.Errorf("withStrictSandbox(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

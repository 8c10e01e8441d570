package face

import (
	"encoding/json"

	"github.com/plexus-mcp/plexus/internal/config"
)

// withStrictSandbox gives a stdio server an agent proposes the strict
// sandbox (no network, writes only to its private folder) unless the
// proposal sets one; the user sees it when approving. Anything that is not
// a stdio server's object is returned as it is, for PutServer to judge.
func withStrictSandbox(raw json.RawMessage) json.RawMessage {
	var cfg map[string]json.RawMessage
	if json.Unmarshal(raw, &cfg) != nil {
		return raw
	}
	var typ string
	if json.Unmarshal(cfg["type"], &typ) != nil || typ != config.TypeStdio {
		return raw
	}
	if _, ok := cfg["sandbox"]; ok {
		return raw
	}
	sb, err := json.Marshal(config.StrictSandbox())
	if err != nil {
		return raw
	}
	cfg["sandbox"] = sb
	out, err := json.Marshal(cfg)
	if err != nil {
		return raw
	}
	return out
}

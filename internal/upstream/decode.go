package upstream

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireMessage is one JSON-RPC message as it travels. Params, result and
// error data stay raw: the SDK decodes them where it needs them, and the
// frame path (frame.go) never does.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  json.RawMessage `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

var errNotMessage = errors.New("not a JSON-RPC request or response")

// decodeMessage decodes one frame as the SDK's jsonrpc.DecodeMessage does
// (the same rules: version "2.0", a method makes a request, else an id
// makes a response), with the standard library's decoder: the SDK's builds
// a new streaming decoder of ~32 KiB for every message, which is most of
// what a call costs a proxy in garbage. One difference: keys match
// case-insensitively, as encoding/json matches them, so a server that
// writes "Params" is understood where the SDK would see no params.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if err := json.Unmarshal(w.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errNotMessage
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

package authserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// peekToolName returns the name of the tool a tools/call request calls,
// leaving the body in place for the handler.
func peekToolName(r *http.Request) (string, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return "", nil
	}
	return msg.Params.Name, nil
}

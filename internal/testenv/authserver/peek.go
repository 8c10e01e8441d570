package authserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// peekCall returns the tool a tools/call request calls and its "text"
// argument, leaving the body in place for the handler.
func peekCall(r *http.Request) (name, text string, err error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return "", "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return "", "", nil
	}
	return msg.Params.Name, msg.Params.Arguments.Text, nil
}

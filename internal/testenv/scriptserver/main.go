// Command scriptserver is an MCP server over stdio that plays a script:
// the wire-transcript tests (internal/e2e/transcript_test.go) make the
// upstream side of each transcript exactly what the transcript says, byte
// for byte, whatever the SDKs would write.
//
// The script is the file named by its one argument, one rule a line:
//
//	METHOD[ TOOL] -> FRAME
//
// A request of METHOD (for tools/call, of TOOL) is answered by the frames
// of its rules, in order (a retry that carries inputResponses, by the
// rules of "METHOD[ TOOL] answered" if there are any), with {{id}} replaced by the request's id. A frame
// that is itself a request (an id and a method) is sent and its answer
// awaited; {{answer}} in a later frame is that answer's result, as a JSON
// string. Lines starting with # are comments. A request no rule names is
// answered with -32601; notifications are read and ignored.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: scriptserver SCRIPT")
		os.Exit(2)
	}
	rules, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "scriptserver:", err)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name           string          `json:"name"`
				InputResponses json.RawMessage `json:"inputResponses"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil || msg.Method == "" {
			continue // a notification, or an answer nobody waits for
		}
		key := msg.Method
		if msg.Method == "tools/call" {
			key += " " + msg.Params.Name
		}
		frames, ok := rules[key+" answered"]
		if !ok || msg.Params.InputResponses == nil {
			frames, ok = rules[key]
		}
		if !ok {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"scriptserver: no rule for %s"}}`+"\n", msg.ID, key)
			out.Flush()
			continue
		}
		answer := `""`
		for _, f := range frames {
			f = strings.ReplaceAll(f, "{{id}}", string(msg.ID))
			f = strings.ReplaceAll(f, "{{answer}}", answer)
			fmt.Fprintln(out, f)
			out.Flush()
			var sent struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal([]byte(f), &sent)
			if sent.ID == nil || sent.Method == "" {
				continue
			}
			// A request of the server's: wait for the client's answer.
			for in.Scan() {
				var a struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(in.Bytes(), &a) != nil || string(a.ID) != string(sent.ID) {
					continue
				}
				got := a.Result
				if got == nil {
					got = a.Error
				}
				b, _ := json.Marshal(string(got))
				answer = string(b)
				break
			}
		}
	}
}

// load reads a script's rules.
func load(path string) (map[string][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rules := map[string][]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, frame, ok := strings.Cut(line, " -> ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want METHOD[ TOOL] -> FRAME", path, i+1)
		}
		rules[strings.TrimSpace(key)] = append(rules[strings.TrimSpace(key)], strings.TrimSpace(frame))
	}
	return rules, nil
}

package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The wire-transcript corpus (testdata/transcripts/*.txtar): what a client
// writes, what the server upstream writes (played by testenv/scriptserver
// exactly as written), and what the client must read back. Each transcript
// runs through every path a client's messages can take — the HTTP face,
// the HTTP face on a session that set a log level (whose calls once took
// another path), and `plexus mcp` — and each must give the same frames,
// modulo ids.
//
// Sections: "server" (the scriptserver's rules), optionally "upstream"
// ("http": the rules played by testenv/scripthttp, a session-era server
// over streamable HTTP, instead of over stdio), optionally "client-era"
// ("2026-07-28": the client has no session and no handshake, every
// request carries its own envelope, as written, and the HTTP headers of
// its era; the http-loglevel path, which needs a session, is skipped), "client" (one message a
// line), "want"
// (the messages the client reads, one a line, in order, after the
// session's handshake), optionally "want-PATH" (what one path reads
// instead, where the client on it asked for something else: a session
// that set a log level gets no message below it), and optionally
// "answers" (the client's answer to each request the face puts to it, in
// order, one result a line). The profile names the server's tools as the
// server does ("bare"), unless a "naming" section says "plexus" (a
// profile that gathers servers, which names them SERVER_TOOL and
// SERVER__PROMPT: {{server}} in any section is the server's name).

// transcriptPaths are the ways through the face a transcript is run.
var transcriptPaths = []string{"http", "http-loglevel", "plexus-mcp"}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := os.ReadFile(filepath.Join(e.Home, "token"))
	token := strings.TrimSpace(string(tok))
	for i, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sec := map[string]string{}
		for _, f := range ar.Files {
			sec[f.Name] = string(f.Data)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		script := filepath.Join(t.TempDir(), name+".script")
		os.WriteFile(script, []byte(sec["server"]), 0o600)
		server := fmt.Sprintf("t%d", i)
		switch upstream := strings.TrimSpace(sec["upstream"]); upstream {
		case "", "stdio":
			e.MustRun("add", server, "--", testenv.ScriptServer(t), script)
		case "http":
			url, saw := testenv.StartScriptHTTP(t, script)
			e.MustRun("add", server, url)
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(saw)
					t.Logf("%s: what the server received:\n%s", name, b)
				}
			})
		default:
			t.Fatalf("%s: upstream %q: want stdio or http", file, upstream)
		}
		naming := cmp.Or(strings.TrimSpace(sec["naming"]), "bare")
		e.MustRun("settings", "set", "profiles."+server, `{"servers":["`+server+`"],"naming":"`+naming+`"}`)
		for k, v := range sec {
			sec[k] = strings.ReplaceAll(v, "{{server}}", server)
		}
		era := strings.TrimSpace(sec["client-era"])
		for _, path := range transcriptPaths {
			t.Run(name+"/"+path, func(t *testing.T) {
				if era == era2026 && path == "http-loglevel" {
					t.Skip("a 2026-07-28 client has no session to set a log level on")
				}
				sec := sec
				if era == era2026 {
					sec = with(sec, "era", era2026)
				}
				var got []string
				switch path {
				case "plexus-mcp":
					got = playStdio(t, e, server, sec)
				default:
					got = playHTTP(t, "http://"+st.HTTPAddr+"/mcp/"+server, token, path == "http-loglevel", sec)
				}
				want := lines(sec["want"])
				if w, ok := sec["want-"+path]; ok {
					want = lines(w) // what this path alone reads, said why in the transcript
				}
				for i := range max(len(got), len(want)) {
					var g, w string
					if i < len(got) {
						g = canonical(got[i])
					}
					if i < len(want) {
						w = canonical(want[i])
					}
					if g != w {
						t.Errorf("message %d:\n got %s\nwant %s", i+1, g, w)
					}
				}
			})
		}
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// canonical is a message with sorted keys, the ids of the face's own
// requests (numbers from the SDK, plexus-ask-N from the frame path) as
// one placeholder, and the client's request ids kept.
func canonical(msg string) string {
	var v any
	if json.Unmarshal([]byte(msg), &v) != nil {
		return "not JSON: " + msg
	}
	if m, ok := v.(map[string]any); ok && m["method"] != nil && m["id"] != nil {
		m["id"] = "SERVER-REQUEST"
	}
	// The face names itself in a 2026-07-28 result's _meta, with the
	// build's version: one placeholder.
	if m, ok := v.(map[string]any); ok {
		if res, ok := m["result"].(map[string]any); ok {
			if meta, ok := res["_meta"].(map[string]any); ok {
				if info, ok := meta["io.modelcontextprotocol/serverInfo"].(map[string]any); ok && info["name"] == "plexus" {
					info["version"] = "VERSION"
				}
			}
		}
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// answersFor is the client's answers to the face's requests, in order.
func answersFor(sec map[string]string) []string { return lines(sec["answers"]) }

// playHTTP runs the client's messages on a session of the HTTP face and
// returns what it reads back (the handshake aside).
func playHTTP(t *testing.T, url, token string, logLevel bool, sec map[string]string) []string {
	t.Helper()
	var post func(sid, body string) []string
	post = func(sid, body string) []string {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if sid == "" {
			return []string{resp.Header.Get("Mcp-Session-Id")}
		}
		return readAnswers(t, resp.Body, resp.Header.Get("Content-Type"), func(q string) {
			post(sid, q) // the client's answer to the face's request
		}, answersFor(sec))
	}
	if sec["era"] == era2026 {
		return play2026HTTP(t, url, token, sec)
	}
	sid := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"transcript","version":"1"}}}`)[0]
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if logLevel {
		post(sid, `{"jsonrpc":"2.0","id":"level","method":"logging/setLevel","params":{"level":"emergency"}}`)
	}
	var got []string
	for _, m := range lines(sec["client"]) {
		got = append(got, post(sid, m)...)
	}
	return got
}

// readAnswers reads a POST's answer — JSON, or an event stream whose
// requests from the face are answered (with answers, in order) as they
// come — and returns every message.
func readAnswers(t *testing.T, body io.Reader, ct string, answer func(string), answers []string) []string {
	t.Helper()
	if strings.HasPrefix(ct, "application/json") {
		b, _ := io.ReadAll(body)
		return []string{string(bytes.TrimSpace(b))}
	}
	var out []string
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		out = append(out, data)
		if reply, ok := replyTo(data, answers, len(out)); ok {
			go answer(reply)
		}
	}
	return out
}

// replyTo is the client's answer to msg if msg is a request of the face's.
func replyTo(msg string, answers []string, n int) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(msg), &m) != nil || m.ID == nil || m.Method == "" {
		return "", false
	}
	result := `{}`
	if len(answers) > 0 {
		result = answers[0]
	}
	return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`, true
}

// playStdio runs the client's messages through `plexus mcp`, written as a
// client that pipelines does (all at once), and returns what it reads back
// (the handshake aside).
func playStdio(t *testing.T, e *testenv.Env, profile string, sec map[string]string) []string {
	t.Helper()
	cmd := exec.Command(e.Bin, "mcp", "--profile", profile)
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	deadline := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	// The handshake as a client that pipelines writes it: all at once. A
	// 2026-07-28 client has none: every request carries its envelope.
	if sec["era"] != era2026 {
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"transcript","version":"1"}}}`)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	var got []string
	// Then each message, and for a request what comes back until its
	// answer, the face's requests answered on the way.
	for i, m := range lines(sec["client"]) {
		fmt.Fprintln(stdin, m)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(m), &req) != nil || req.ID == nil {
			continue
		}
		for sc.Scan() {
			msg := sc.Text()
			var r struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal([]byte(msg), &r)
			if string(r.ID) == "0" && r.Method == "" || strings.HasSuffix(r.Method, "/list_changed") {
				continue // the handshake's answer; the face's list_changed
			}
			got = append(got, msg)
			if reply, ok := replyTo(msg, answersFor(sec), len(got)); ok {
				fmt.Fprintln(stdin, reply)
				continue
			}
			if string(r.ID) == string(req.ID) {
				break
			}
		}
		if sc.Err() != nil {
			t.Fatalf("message %d: %v", i+1, sc.Err())
		}
	}
	return got
}

// with is sec with key set to v.
func with(sec map[string]string, key, v string) map[string]string {
	out := map[string]string{key: v}
	for k, x := range sec {
		if k != key {
			out[k] = x
		}
	}
	return out
}

// play2026HTTP posts the client's messages as a 2026-07-28 client does —
// no session, the era's headers on each — and returns what it reads back.
func play2026HTTP(t *testing.T, url, token string, sec map[string]string) []string {
	t.Helper()
	var post func(body string) []string
	post = func(body string) []string {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"params"`
		}
		json.Unmarshal([]byte(body), &m)
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", era2026)
		if m.Method != "" {
			req.Header.Set("Mcp-Method", m.Method)
		}
		if name := cmp.Or(m.Params.Name, m.Params.URI); name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 400 {
			b, _ := io.ReadAll(resp.Body)
			return []string{fmt.Sprintf("HTTP %d %s", resp.StatusCode, bytes.TrimSpace(b))}
		}
		return readAnswers(t, resp.Body, resp.Header.Get("Content-Type"), func(q string) { post(q) }, answersFor(sec))
	}
	var got []string
	for _, m := range lines(sec["client"]) {
		got = append(got, post(m)...)
	}
	return got
}

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/peer"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTeamKeptResults: a result over its cap, of a stdio server one
// replica runs, called through the other (and through that one), is read
// page by page through both replicas and through a round-robin balancer, by MCP 2026-07-28
// clients (no session: each request may land anywhere) and by a
// session-era client; an id no replica kept answers as unknown, without
// claiming it was kept; and once the replica that kept a result is gone,
// a read through any other says so.
func TestTeamKeptResults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("PostgreSQL, two replicas and a balancer; under -short, TestTeamIdentityAcrossReplicas reads kept results across replicas, and peer TestRouterSendsResultReads tests the router")
	}
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	seed := testenv.New(t)
	if err := os.MkdirAll(seed.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"mcp": {"servers": {"example": {"type": "stdio", "command": %q, "args": ["example-server"], "maxResultBytes": 4096}}, "face": {"allowExternalCall": true}}}`, seed.Bin)
	if err := os.WriteFile(filepath.Join(seed.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	seed.MustRun("store", "migrate", "--from", seed.Home, "--to", pg.URL, "--store-key-file", keyFile)
	rs := peerReplicas(t, 2, pg.URL, keyFile)
	// A replica sandboxes a stdio server by default; edit --no-sandbox
	// through any replica opts it out (before, it removed the setting,
	// which on a replica is the default sandbox). The edit is verified
	// against the running server: once it runs.
	exampleReady(t, rs)
	rs[1].MustRun("edit", "example", "--no-sandbox")
	for _, r := range rs {
		within(t, 10*time.Second, "the example server without a sandbox on every replica", func() bool {
			return servers(t, r.Env)["example"].Sandbox == ""
		})
	}
	exampleReady(t, rs)
	lb := balancer(t, rs)
	echo := toolNamed(t, tools(t, rs[0].Env), "example", "echo").Name
	var owner int
	for i, r := range rs {
		if servers(t, r.Env)["example"].RunsOn == "" {
			owner = i
		}
	}
	// The text is about 10 pages of 4 KiB, each page different.
	var text strings.Builder
	for i := 0; text.Len() < 40<<10; i++ {
		fmt.Fprintf(&text, "line %05d of a large result; ", i)
	}
	want := text.String()
	token := rs[0].token

	readAll := func(t *testing.T, first string, via func(page int) string) []string {
		t.Helper()
		var got strings.Builder
		var where []string
		for uri, page := first, 1; uri != ""; page++ {
			base := via(page)
			res, rpcErr := post2026(t, base, token, "resources/read", `{"uri":`+jsonString(uri)+`}`)
			if rpcErr != "" {
				t.Fatalf("page %d (%s) through %s: %s", page, uri, base, rpcErr)
			}
			var rr struct {
				Contents []struct {
					Text string         `json:"text"`
					Meta map[string]any `json:"_meta"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(res, &rr); err != nil || len(rr.Contents) != 1 {
				t.Fatalf("page %d through %s: %v %.200s", page, base, err, res)
			}
			got.WriteString(rr.Contents[0].Text)
			where = append(where, base)
			uri, _ = rr.Contents[0].Meta["plexus/next"].(string)
		}
		var whole struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal([]byte(got.String()), &whole); err != nil || len(whole.Content) == 0 || whole.Content[0].Text != want {
			t.Fatalf("the pages read through %v are not the result (%v): %.200s", where, err, got.String())
		}
		return where
	}
	each := func(page int) string { return rs[page%len(rs)].base }

	var kept []string // results kept, by the replica that kept them
	for i := range rs {
		runs := map[bool]string{true: "runs", false: "does not run"}[i == owner]
		t.Run(fmt.Sprintf("called through replica %d, which %s the server", i, runs), func(t *testing.T) {
			link := keptLink2026(t, rs[i].base, token, echo, want)
			holder, _ := peer.ReplicaOf(strings.Split(strings.TrimPrefix(link, "plexus://results/"), "/")[0])
			if holder != replicaAt(t, pg.URL, rs[i].peer) {
				t.Fatalf("the result was kept by %s, not by the replica called", holder)
			}
			if i != owner {
				kept = append(kept, link)
			}
			where := readAll(t, link, each)
			t.Logf("%d pages, read through replicas %v", len(where), where)
			readAll(t, link, func(int) string { return lb })
		})
	}
	t.Run("called through the balancer", func(t *testing.T) {
		for range 3 {
			link := keptLink2026(t, lb, token, echo, want)
			readAll(t, link, func(int) string { return lb })
		}
	})
	t.Run("a session-era client, its requests through every replica", func(t *testing.T) {
		// The session on a replica that does not run the server: the
		// call goes from there to the one that does.
		hc := &http.Client{}
		code, id, _ := initialize(t, hc, rs[1-owner].base, token)
		if code != http.StatusOK {
			t.Fatalf("initialize: %d", code)
		}
		sessionPOST(t, hc, rs[owner].base, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":{"text":%s}}}`, echo, jsonString(want))
		code, body := sessionPOST(t, hc, rs[owner].base, token, id, call)
		link := linkIn(body)
		if code != http.StatusOK || link == "" {
			t.Fatalf("the call: %d %.300s", code, body)
		}
		var got strings.Builder
		for page, uri := 1, link; uri != ""; page++ {
			read := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%s}}`, 10+page, jsonString(uri))
			code, body := sessionPOST(t, hc, rs[page%2].base, token, id, read)
			m := pageIn(body)
			if code != http.StatusOK || m == nil {
				t.Fatalf("page %d: %d %.300s", page, code, body)
			}
			got.WriteString(m.Text)
			uri = m.Next
		}
		if !strings.Contains(got.String(), want[len(want)-200:]) {
			t.Fatalf("the session's pages are not the result: %.200s", got.String())
		}
		deleteSession(hc, rs[owner].base, token, id)
	})
	t.Run("the cost of a page read through another replica", func(t *testing.T) {
		holderIdx := 1 - owner
		link := keptLink2026(t, rs[holderIdx].base, token, echo, want)
		read := func(base string) time.Duration {
			start := time.Now()
			if _, e := post2026(t, base, token, "resources/read", `{"uri":`+jsonString(link)+`}`); e != "" {
				t.Fatal(e)
			}
			return time.Since(start)
		}
		here, there := rs[holderIdx].base, rs[owner].base
		read(here)
		read(there)
		var onHolder, onOther []time.Duration
		for range 50 { // interleaved: the machine's load falls on both
			onHolder = append(onHolder, read(here))
			onOther = append(onOther, read(there))
		}
		slices.Sort(onHolder)
		slices.Sort(onOther)
		h, o := onHolder[25], onOther[25]
		t.Logf("a 4 KiB page of a kept result, median of 50: %s on the replica that keeps it, %s through another (%+v)", h, o, o-h)
	})

	unknown := func(t *testing.T, base, id string) string {
		t.Helper()
		_, e := post2026(t, base, token, "resources/read", `{"uri":"plexus://results/`+id+`/1"}`)
		if e == "" {
			t.Fatalf("a read of %s through %s succeeded", id, base)
		}
		return e
	}
	t.Run("an id no replica kept", func(t *testing.T) {
		for i, r := range rs {
			for _, id := range []string{peer.NewSessionID(replicaAt(t, pg.URL, rs[1-i].peer)), strings.Repeat("0", 32)} {
				e := unknown(t, r.base, id)
				for _, claim := range []string{"any more", "expired"} {
					if strings.Contains(e, claim) {
						t.Errorf("an id never kept is said to be %q: %s", claim, e)
					}
				}
			}
		}
	})
	t.Run("the replica that kept a result is gone", func(t *testing.T) {
		if len(kept) == 0 {
			t.Fatal("no result was kept")
		}
		link := kept[0]
		id := strings.Split(strings.TrimPrefix(link, "plexus://results/"), "/")[0]
		holder, _ := peer.ReplicaOf(id)
		var gone, other replica
		for _, r := range rs {
			if replicaAt(t, pg.URL, r.peer) == holder {
				gone = r
			} else if servers(t, r.Env)["example"].RunsOn == "" {
				other = r
			}
		}
		gone.KillDaemon()
		// A read sent on a connection kept from before the kill may find
		// it broken ("did not answer; read it again"), once; then the
		// replica is gone.
		for try := 0; ; try++ {
			e := unknown(t, other.base, id)
			if strings.Contains(e, "the replica that kept it ("+holder+") is gone") {
				t.Logf("a read of a killed replica's result: %s", e)
				break
			}
			if !strings.Contains(e, "did not answer; read it again") || try > 0 {
				t.Fatalf("read %d of a killed replica's result: %s", try, e)
			}
		}
	})
}

// post2026 sends one MCP 2026-07-28 request (no session) to base's /mcp
// and returns its result, or its error's message (a refusal's body).
func post2026(t *testing.T, base, token, method, params string) (json.RawMessage, string) {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + meta + "," + strings.TrimPrefix(params, "{") + "}"
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	var named struct{ Name, URI string }
	json.Unmarshal([]byte(params), &named)
	if named.Name+named.URI != "" {
		req.Header.Set("Mcp-Name", named.Name+named.URI)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, chunk := range bytes.Split(b, []byte("\n")) {
		chunk = bytes.TrimPrefix(chunk, []byte("data: "))
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(chunk, &m) != nil {
			continue
		}
		if m.Error != nil {
			return nil, m.Error.Message
		}
		if m.Result != nil {
			return m.Result, ""
		}
	}
	return nil, fmt.Sprintf("%s: %.300s", resp.Status, b)
}

// keptLink2026 calls echo with text through base as an MCP 2026-07-28
// client and returns the link to the kept result it answered with.
func keptLink2026(t *testing.T, base, token, echo, text string) string {
	t.Helper()
	res, e := post2026(t, base, token, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":%s}}`, echo, jsonString(text)))
	link := linkIn(string(res))
	if e != "" || link == "" {
		t.Fatalf("a large call through %s: %s %.300s", base, e, res)
	}
	return link
}

// linkIn is the first link to a kept result in s.
func linkIn(s string) string {
	i := strings.Index(s, `"uri":"plexus://results/`)
	if i < 0 {
		return ""
	}
	rest := s[i+len(`"uri":"`):]
	return rest[:strings.IndexByte(rest, '"')]
}

// keptPage is one page of a kept result read on a session.
type keptPage struct{ Text, Next string }

// pageIn is the page a session's resources/read answered with.
func pageIn(body string) *keptPage {
	for _, chunk := range strings.Split(body, "\n") {
		var m struct {
			Result struct {
				Contents []struct {
					Text string         `json:"text"`
					Meta map[string]any `json:"_meta"`
				} `json:"contents"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(chunk, "data: ")), &m) == nil && len(m.Result.Contents) == 1 {
			next, _ := m.Result.Contents[0].Meta["plexus/next"].(string)
			return &keptPage{Text: m.Result.Contents[0].Text, Next: next}
		}
	}
	return nil
}

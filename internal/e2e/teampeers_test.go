package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	callerid "github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/peer"
	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestTeamIdentityAcrossReplicas: in team mode behind a balancer, a
// member's session-era session is served by its replica wherever the
// requests land, and the member's own token is checked there again: the
// replica holding the session refuses another member on it, and a
// request the channel brings without the member's token.
func TestTeamIdentityAcrossReplicas(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, key := writeKeyFile(t)
	idp := authserver.Start(t, authserver.Options{})
	ports := []int{testenv.FreePort(t), testenv.FreePort(t)}
	var backends []string
	for _, p := range ports {
		backends = append(backends, "127.0.0.1:"+strconv.Itoa(p))
	}
	lb := "http://" + testenv.StartHAProxy(t, backends...).Addr
	resource := lb + "/mcp"

	// The settings, with the team section, moved into the database.
	seed := testenv.New(t)
	if err := os.MkdirAll(seed.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	// Two servers whose only era is the session's, by their own choice
	// (old) and by a pin of the settings (held): the replicas still speak
	// MCP 2026-07-28 between them, every request naming its member, so
	// that the one connection a replica has to another's server serves
	// every member (a session-era session would be its first member's).
	script := filepath.Join(seed.Home, "session.script")
	if err := os.WriteFile(script, []byte(`initialize -> {"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}}
tools/list -> {"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}
tools/call echo -> {"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"old echoes"}]}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"mcp": {"servers": {"example": {"type": "stdio", "command": %q, "args": ["example-server"], "maxResultBytes": 4096},
			"secret": {"type": "stdio", "command": %q, "args": ["example-server"]},
			"old": {"type": "stdio", "command": %q, "args": [%q], "sandbox": false},
			"held": {"type": "stdio", "command": %q, "args": ["example-server"], "protocolVersion": "2025-11-25"}},
		"face": {"allowExternalCall": true},
		"profiles": {"default": {"servers": ["example", "old", "held"], "users": ["ada@example.com", "carol@example.com"]},
			"eng": {"servers": ["secret"], "users": ["ada@example.com"]}}},
		"team": {"resource": %q, "issuers": [%q], "userClaim": "email"}}`, seed.Bin, seed.Bin, testenv.ScriptServer(t), script, seed.Bin, resource, idp.URL)
	if err := os.WriteFile(filepath.Join(seed.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	seed.MustRun("store", "migrate", "--from", seed.Home, "--to", pg.URL, "--store-key-file", keyFile)

	var rs []replica
	for _, p := range ports {
		e := testenv.New(t)
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		e.DaemonArgs = []string{"--store", pg.URL, "--store-key-file", keyFile, "--peer-listen", addr, "--listen", "127.0.0.1:" + strconv.Itoa(p)}
		e.StartDaemon()
		rs = append(rs, replica{Env: e, base: "http://127.0.0.1:" + strconv.Itoa(p), peer: addr})
	}
	exampleReady(t, rs)
	echo := toolNamed(t, tools(t, rs[0].Env), "example", "echo").Name

	mint := func(email string) string {
		return "Bearer " + idp.AccessJWT("sub-"+email, resource, 5*time.Minute, map[string]any{"email": email})
	}
	ada, carol := mint("ada@example.com"), mint("carol@example.com")
	for _, r := range rs {
		st, err := client.New(r.Home).Status(t.Context())
		if err != nil || "http://"+st.HTTPAddr != r.base {
			t.Fatalf("replica's HTTP address %q (%v), want %s", st.HTTPAddr, err, r.base)
		}
	}
	// The balancer checked the replicas out while they were starting:
	// wait until it sends sessions to both.
	opened := map[string]bool{}
	within(t, 10*time.Second, "the balancer opening sessions on both replicas", func() bool {
		if _, hdr, _ := teamPost(t, resource, carol, teamInit); hdr.Get("Mcp-Session-Id") != "" {
			r, _ := peer.ReplicaOf(hdr.Get("Mcp-Session-Id"))
			opened[r] = true
		}
		return len(opened) == 2
	})
	status, hdr, body := teamPost(t, resource, ada, teamInit)
	id := hdr.Get("Mcp-Session-Id")
	holder, ok := peer.ReplicaOf(id)
	if status != http.StatusOK || !ok {
		t.Fatalf("ada's initialize through the balancer: %d %q %s", status, id, body)
	}
	on := func(auth, body string) (int, string) {
		status, _, out := teamPost(t, resource, auth, body, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25")
		return status, out
	}
	on(ada, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 6 {
		text := fmt.Sprintf("ada %d", i)
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, 10+i, echo, text)
		if status, out := on(ada, call); status != http.StatusOK || !strings.Contains(out, text) {
			t.Fatalf("ada's call %d through the balancer: %d %s", i, status, out)
		}
	}
	// Each member's calls to the session-era servers through each
	// replica: one of them runs the server, the other reaches it over the
	// channel.
	for server, says := range map[string]string{"old": "old echoes", "held": "a member's hello"} {
		within(t, 15*time.Second, server+" ready on both replicas", func() bool {
			return servers(t, rs[0].Env)[server].State == "ready" && servers(t, rs[1].Env)[server].State == "ready"
		})
		name := toolNamed(t, tools(t, rs[0].Env), server, "echo").Name
		for _, r := range rs {
			for _, who := range []string{ada, carol, ada} {
				res, e := post2026(t, r.base, strings.TrimPrefix(who, "Bearer "), "tools/call", `{"name":`+jsonString(name)+`,"arguments":{"text":"a member's hello"}}`)
				if e != "" || strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), says) {
					t.Fatalf("a call of %s's echo through %s: %s %s", server, r.base, res, e)
				}
			}
		}
	}
	// Carol may use the profile, but not ada's session: refused by the
	// replica that holds it, wherever her request lands.
	for i := range 4 {
		if status, out := on(carol, `{"jsonrpc":"2.0","id":50,"method":"ping"}`); status != http.StatusForbidden {
			t.Fatalf("carol on ada's session (try %d): %d %s", i, status, out)
		}
	}
	if status, _ := on("", `{"jsonrpc":"2.0","id":51,"method":"ping"}`); status != http.StatusUnauthorized {
		t.Fatalf("no token on ada's session: %d", status)
	}
	// A replica's signature is not a member's token: the replica that
	// holds the session still wants ada's; and the channel never passes a
	// request on again.
	conn, err := pgx.Connect(t.Context(), pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ch := channelOf(key)
	ping := `{"jsonrpc":"2.0","id":60,"method":"ping"}`
	for _, r := range rs {
		to := replicaAt(t, pg.URL, r.peer)
		req := ch.request(t, "POST", r.peer, "/mcp", to, ping, nil, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25")
		if status, _ := send(t, req); status != http.StatusUnauthorized {
			t.Errorf("a replica's signed request without ada's token at %s: %d, want 401", r.peer, status)
		}
		want := http.StatusNotFound // not its session, and not passed on
		if to == holder {
			want = http.StatusOK
		}
		req = ch.request(t, "POST", r.peer, "/mcp", to, ping, nil, "Authorization", ada, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25")
		if status, out := send(t, req); status != want {
			t.Errorf("ada's ping on the channel of %s: %d %s, want %d", r.peer, status, out, want)
		}
	}
	// /server/NAME obeys the member's gates: a call a replica forwards
	// for carol to the eng-only server is refused by its owner; ada's is
	// served, once; a request without the store's key, with the fixed
	// credential of before and the lease's token, is refused.
	var secretAddr, secretOwner string
	var secretToken int64
	within(t, 15*time.Second, "secret ready on both replicas", func() bool {
		return servers(t, rs[0].Env)["secret"].State == "ready" && servers(t, rs[1].Env)["secret"].State == "ready"
	})
	within(t, 10*time.Second, "the secret server's lease", func() bool {
		return conn.QueryRow(t.Context(), `SELECT r.addr, l.owner, l.token FROM plexus_leases l JOIN plexus_replicas r ON r.id = l.owner WHERE l.server = 'secret'`).
			Scan(&secretAddr, &secretOwner, &secretToken) == nil
	})
	tok := strconv.FormatInt(secretToken, 10)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	carolID := &callerid.Identity{Issuer: idp.URL, User: "carol@example.com"}
	adaID := &callerid.Identity{Issuer: idp.URL, User: "ada@example.com"}
	if status, out := send(t, ch.request(t, "POST", secretAddr, "/server/secret", secretOwner, init, carolID, peer.TokenHeader, tok)); status != http.StatusForbidden {
		t.Errorf("carol's call forwarded to the eng-only server: %d %s, want 403", status, out)
	}
	adas := ch.request(t, "POST", secretAddr, "/server/secret", secretOwner, init, adaID, peer.TokenHeader, tok)
	if status, out := send(t, adas); status != http.StatusOK {
		t.Errorf("ada's call forwarded to the eng-only server: %d %s", status, out)
	}
	if status, _ := send(t, adas); status != http.StatusUnauthorized {
		t.Errorf("ada's request replayed: %d, want 401", status)
	}
	fixed := hmac.New(sha256.New, key)
	fixed.Write([]byte("plexus internal channel v1"))
	for guess := secretToken - 1; guess <= secretToken+1; guess++ {
		forged := channel{}.request(t, "POST", secretAddr, "/server/secret", secretOwner, init, nil,
			"Plexus-Peer-Credential", base64.RawURLEncoding.EncodeToString(fixed.Sum(nil)), peer.TokenHeader, strconv.FormatInt(guess, 10))
		if status, _ := send(t, forged); status != http.StatusUnauthorized {
			t.Errorf("the fixed credential of before with lease token %d: %d, want 401", guess, status)
		}
	}
	t.Logf("ada's session held by replica %s, served through the balancer; carol and no token refused on it", holder)

	// A result kept for ada's call is read by ada alone, through any
	// replica: to carol, who may use the profile, it is exactly an id
	// never kept, wherever her read lands; without a token, refused; a
	// replica's signature without ada's token reads nothing either.
	big := strings.Repeat("ada's kept canary ", 1000)
	link := keptLink2026(t, rs[0].base, strings.TrimPrefix(ada, "Bearer "), echo, big)
	resultID := strings.Split(strings.TrimPrefix(link, "plexus://results/"), "/")[0]
	keeper, _ := peer.ReplicaOf(resultID)
	never := peer.NewSessionID(keeper)
	for _, base := range []string{rs[0].base, rs[1].base, lb, lb} {
		if res, e := post2026(t, base, strings.TrimPrefix(ada, "Bearer "), "resources/read", `{"uri":`+jsonString(link)+`}`); e != "" || !strings.Contains(string(res), "kept canary") {
			t.Errorf("ada reading her kept result through %s: %s", base, e)
		}
		for _, page := range []string{"1", "2", "9"} {
			_, got := post2026(t, base, strings.TrimPrefix(carol, "Bearer "), "resources/read", `{"uri":"plexus://results/`+resultID+`/`+page+`"}`)
			_, want := post2026(t, base, strings.TrimPrefix(carol, "Bearer "), "resources/read", `{"uri":"plexus://results/`+never+`/`+page+`"}`)
			if got == "" || strings.ReplaceAll(got, resultID, never) != want {
				t.Errorf("carol reading page %s of ada's result through %s: %q, not what an id never kept gets (%q)", page, base, got, want)
			}
		}
		if res, e := post2026(t, base, "", "resources/read", `{"uri":`+jsonString(link)+`}`); !strings.Contains(e, "access token") || res != nil {
			t.Errorf("a read of ada's result without a token through %s: %s", base, e)
		}
	}
	var keeperAddr string
	for _, r := range rs {
		if replicaAt(t, pg.URL, r.peer) == keeper {
			keeperAddr = r.peer
		}
	}
	read := `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":` + jsonString(link) + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	era := []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", link}
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"signed, with carol's token, naming ada", ch.request(t, "POST", keeperAddr, "/mcp", keeper, read, adaID, append(era, "Authorization", carol)...), http.StatusOK},
		{"signed, without a token, naming ada", ch.request(t, "POST", keeperAddr, "/mcp", keeper, read, adaID, era...), http.StatusUnauthorized},
		{"unsigned, with ada's token", channel{}.request(t, "POST", keeperAddr, "/mcp", keeper, read, nil, append(era, "Authorization", ada)...), http.StatusUnauthorized},
	} {
		status, out := send(t, tc.req)
		if status != tc.status || strings.Contains(out, "kept canary") {
			t.Errorf("a read of ada's result on the keeper's channel, %s: %d %.200s, want %d and nothing of it", tc.name, status, out, tc.status)
		}
	}
}

package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// FuzzAppendRecord checks appendRecord writes what encoding/json writes,
// byte for byte, for any record: the chain's MACs are over these bytes.
func FuzzAppendRecord(f *testing.F) {
	f.Add(int64(1765000000123456789), 0, "tools/call", "ann@example.com", "claude-code", "github", "search_issues", "ok", "", 12.5, 40, 2000, uint64(0), "", "")
	f.Add(int64(-62135596800), 3600, "policy", "", "<a>&\"b\"\\", "s\u2028", "\xff\x00\n", "denied", "rule 1", 1e-7, 0, 0, uint64(7), "ab12", `{"a": [1, 2]}`)
	f.Add(int64(253402300800), -19800, "", "é", "", "", "", "", "", 1e21, -1, 1, uint64(1), "", "")
	f.Add(int64(0), 0, "login", "", "", "", "", "error", "grant", math.Inf(1), 0, 0, uint64(0), "", "")
	f.Fuzz(func(t *testing.T, unixNano int64, offset int, kind, member, client, server, tool, outcome, reason string, ms float64, argBytes, resultBytes int, seq uint64, mac, payload string) {
		r := Record{Time: time.Unix(0, unixNano).In(time.FixedZone("z", offset%(30*3600))), Kind: kind, Replica: reason, Member: member,
			Client: client, ClientVersion: tool, Profile: server, Session: kind, Server: server, Tool: tool, Name: member,
			Outcome: outcome, Reason: reason, Ms: ms, ArgBytes: argBytes, ResultBytes: resultBytes, Seq: seq, MAC: mac}
		if json.Valid([]byte(payload)) {
			r.Arguments = json.RawMessage(payload)
		}
		want, wantErr := json.Marshal(&r)
		got, gotErr := appendRecord([]byte("prefix"), &r)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("errors differ: encoding/json %v, appendRecord %v", wantErr, gotErr)
		}
		if wantErr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("appendRecord wrote\n%s\nencoding/json\n%s", got, want)
		}
	})
}

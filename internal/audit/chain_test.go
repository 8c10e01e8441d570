package audit

import (
	"strings"
	"testing"
)

// TestChainFindsForgeryAndErasure is the attacker's test of the team's
// records: someone who can write the database but lacks the team's key
// alters a record, erases one from the middle, forges one with a fresh
// sequence number, or swaps two records' order; each is found. The
// genuine chain verifies.
func TestChainFindsForgeryAndErasure(t *testing.T) {
	key := []byte("derived-from-the-team-secret")
	sign := func(replica string, n int) []Record {
		c := NewChain(key, 0, "")
		var rs []Record
		for i := range n {
			r := Record{Kind: KindToolCall, Replica: replica, Server: "s", Tool: "t" + string(rune('a'+i)), Outcome: "ok"}
			c.Sign(&r)
			rs = append(rs, r)
		}
		return rs
	}
	good := append(sign("r1", 5), sign("r2", 3)...)
	if p := Verify([][]byte{key}, good, false); len(p) != 0 {
		t.Fatalf("the genuine chain does not verify: %v", p)
	}
	cases := map[string]func([]Record) []Record{
		"altered outcome": func(rs []Record) []Record { rs[2].Outcome = "denied"; return rs },
		"altered member":  func(rs []Record) []Record { rs[1].Member = "mallory"; return rs },
		"erased middle":   func(rs []Record) []Record { return append(rs[:2:2], rs[3:]...) },
		"erased and renumbered": func(rs []Record) []Record {
			out := append(rs[:2:2], rs[3:5]...)
			for i := range out[:4] {
				out[i].Seq = uint64(i + 1)
			}
			return out
		},
		"forged with a fresh seq": func(rs []Record) []Record {
			f := rs[4]
			f.Seq, f.Tool, f.MAC = 6, "delete_everything", strings.Repeat("0", 64)
			return append(rs, f)
		},
		"forged by a wrong key": func(rs []Record) []Record {
			c := NewChain([]byte("a guess"), rs[4].Seq, rs[4].MAC)
			f := Record{Kind: KindToolCall, Replica: "r1", Tool: "x", Outcome: "ok"}
			c.Sign(&f)
			return append(rs, f)
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			rs := tamper(append([]Record(nil), good...))
			if p := Verify([][]byte{key}, rs, false); len(p) == 0 {
				t.Errorf("tampering not found")
			}
		})
	}
	// A chain signed before a rotation of the store's key verifies under
	// the old key beside the new one's chains.
	rotated := [][]byte{[]byte("the new key"), key}
	c := NewChain(rotated[0], 0, "")
	r := Record{Kind: KindToolCall, Replica: "r3", Outcome: "ok"}
	c.Sign(&r)
	if p := Verify(rotated, append(append([]Record(nil), good...), r), false); len(p) != 0 {
		t.Errorf("chains under the old and the new key: %v", p)
	}
	// A store that pruned its oldest records verifies from the first kept.
	if p := Verify([][]byte{key}, good[2:], true); len(p) != 0 {
		t.Errorf("a pruned chain does not verify: %v", p)
	}
}

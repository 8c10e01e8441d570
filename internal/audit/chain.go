package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
)

// Chain signs a replica's records into a hash chain: record n carries its
// sequence number and HMAC-SHA256(key, mac(n-1) ‖ record n without its
// mac). The key is derived from the team's secret, which a team member's
// token does not carry and the database does not hold: a database writer
// can delete or alter rows, but not make a MAC that verifies, so Verify
// finds a forged record (its MAC), an altered one (its MAC), an erased
// one (a gap in the sequence, or the next record's MAC, which covers the
// one before).
type Chain struct {
	key  []byte
	seq  uint64
	prev string
	// old are the keys of before a rotation of the store's key, which
	// older chains were signed with: Verify takes them too.
	old [][]byte
}

// NewChain starts a chain with key, continuing after the record seq whose
// MAC was prev (0 and "" for a new one). old are keys of before a
// rotation, for verifying the chains signed with them.
func NewChain(key []byte, seq uint64, prev string, old ...[]byte) *Chain {
	return &Chain{key: key, seq: seq, prev: prev, old: old}
}

// Keys are the chain's key and the old ones, the current first.
func (c *Chain) Keys() [][]byte { return append([][]byte{c.key}, c.old...) }

// Sign numbers r and sets its MAC.
func (c *Chain) Sign(r *Record) {
	c.seq++
	r.Seq = c.seq
	r.MAC = mac(c.key, c.prev, r)
	c.prev = r.MAC
}

func mac(key []byte, prev string, r *Record) string {
	cp := *r
	cp.MAC = ""
	b, _ := json.Marshal(&cp)
	h := hmac.New(sha256.New, key)
	h.Write([]byte(prev))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks the records of each replica form an unbroken chain under
// key, from sequence number 1 — or, for a store that prunes its oldest
// records, from the first record kept. It returns every problem found, one per line; none
// means the records are as their replicas wrote them.
//
// Each replica's chain is checked under the first of keys its first record
// verifies with (a chain written before a rotation of the store's key has
// an old one), else under the first.
func Verify(keys [][]byte, recs []Record, pruned bool) []string {
	by := map[string][]Record{}
	for _, r := range recs {
		by[r.Replica] = append(by[r.Replica], r)
	}
	var problems []string
	replicas := make([]string, 0, len(by))
	for name := range by {
		replicas = append(replicas, name)
	}
	sort.Strings(replicas)
	for _, name := range replicas {
		rs := by[name]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Seq < rs[j].Seq })
		key := chainKey(keys, rs, pruned)
		prev := ""
		want := uint64(1)
		for i, r := range rs {
			if i == 0 && pruned && r.Seq != 1 {
				// Its predecessor was pruned: the chain is checked from
				// it on (its own MAC covers a record no longer kept).
				prev, want = r.MAC, r.Seq+1
				continue
			}
			if r.Seq != want {
				problems = append(problems, fmt.Sprintf("replica %q: record %d missing (next is %d)", name, want, r.Seq))
			}
			if got := mac(key, prev, &r); !hmac.Equal([]byte(got), []byte(r.MAC)) {
				problems = append(problems, fmt.Sprintf("replica %q: record %d does not verify: forged, altered, or the one before it was erased", name, r.Seq))
			}
			prev, want = r.MAC, r.Seq+1
		}
	}
	return problems
}

// chainKey is the key of keys that a chain's first checked record
// verifies under: its first, or, pruned, its second (the first is taken
// as it is).
func chainKey(keys [][]byte, rs []Record, pruned bool) []byte {
	first, prev := 0, ""
	if pruned && len(rs) > 1 && rs[0].Seq != 1 {
		first, prev = 1, rs[0].MAC
	}
	for _, k := range keys {
		if first < len(rs) && hmac.Equal([]byte(mac(k, prev, &rs[first])), []byte(rs[first].MAC)) {
			return k
		}
	}
	return keys[0]
}

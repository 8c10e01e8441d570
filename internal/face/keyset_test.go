package face

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeySetIsASet: a keySet answers as a map of its keys would, through
// random adds and removes over a few keys (one inline, then a batch's map).
func TestKeySetIsASet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var k keySet
		want := map[string]bool{}
		for range 30 {
			key := string(rune('a' + r.IntN(4)))
			if r.IntN(3) == 0 {
				k.remove(key)
				delete(want, key)
			} else {
				k.add(key)
				want[key] = true
			}
			for _, c := range "abcd" {
				if got := k.contains(string(c)); got != want[string(c)] {
					t.Fatalf("round %d: contains(%c) = %v, want %v", round, c, got, want[string(c)])
				}
			}
			if k.len() != len(want) {
				t.Fatalf("round %d: len = %d, want %d", round, k.len(), len(want))
			}
			keys := k.keys()
			slices.Sort(keys)
			var wantKeys []string
			for key := range want {
				wantKeys = append(wantKeys, key)
			}
			slices.Sort(wantKeys)
			if !slices.Equal(keys, wantKeys) {
				t.Fatalf("round %d: keys = %v, want %v", round, keys, wantKeys)
			}
		}
	}
}

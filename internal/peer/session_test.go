package peer

import (
	"strings"
	"testing"
)

func TestReplicaOf(t *testing.T) {
	self := NewReplicaID()
	for _, tc := range []struct {
		session string
		want    string
		ok      bool
	}{
		{NewSessionID(self), self, true},
		{"0123456789abcdef.x", "0123456789abcdef", true},
		{"0123456789abcdef.", "", false},
		{"0123456789abcdef", "", false},
		{"0123456789ABCDEF.x", "", false},
		{"0123456789abcde.x", "", false},
		{"0123456789abcdef0.x", "", false},
		{"", "", false},
		{"3f1c2e0b-9d7a-4c1e-8f00-0a1b2c3d4e5f", "", false}, // a one-machine daemon's
	} {
		got, ok := ReplicaOf(tc.session)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ReplicaOf(%q) = %q, %v; want %q, %v", tc.session, got, ok, tc.want, tc.ok)
		}
	}
	if a, b := NewReplicaID(), NewReplicaID(); a == b {
		t.Fatal("two replica ids alike")
	}
}

// FuzzReplicaOf: whatever a client sends as its session id, ReplicaOf
// does not panic, and what it returns is an id NewSessionID could have
// put there.
func FuzzReplicaOf(f *testing.F) {
	f.Add(NewSessionID(NewReplicaID()))
	f.Add("0123456789abcdef.")
	f.Add("..")
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := ReplicaOf(s)
		if !ok {
			if id != "" {
				t.Fatalf("not a replica's session, yet %q", id)
			}
			return
		}
		if len(id) != idLen || !isLowerHex(id) || !strings.HasPrefix(s, id+".") || len(s) == len(id)+1 {
			t.Fatalf("ReplicaOf(%q) = %q", s, id)
		}
	})
}

package peer

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// idLen is the length of a replica id: hex of 8 random bytes.
const idLen = 16

// NewReplicaID returns a fresh replica id. A replica takes a new one at
// every start: the sessions of its previous life are gone with it, and
// their ids must not name it.
func NewReplicaID() string {
	b := make([]byte, idLen/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NewSessionID returns a protocol session id that names replica: the
// replica's id, a dot, then 128 random bits. Every character is visible
// ASCII, as MCP requires of a session id.
func NewSessionID(replica string) string {
	b := make([]byte, 16)
	rand.Read(b)
	return replica + "." + hex.EncodeToString(b)
}

// ReplicaOf returns the replica a session id names, or false when the id
// is not one NewSessionID makes (a session of a one-machine daemon, or
// anything a client made up).
func ReplicaOf(session string) (string, bool) {
	id, rest, ok := strings.Cut(session, ".")
	if !ok || len(id) != idLen || rest == "" || !isLowerHex(id) {
		return "", false
	}
	return id, true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

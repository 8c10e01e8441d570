// Package peer is the internal channel between the replicas of a team
// (docs/team.md): each replica's address in the shared database, kept by
// heartbeats (Registry), the credential every replica derives from the
// store's key and the guard that demands it (Guard), session ids that
// name the replica that minted them (NewSessionID, ReplicaOf), and the
// router that hands a session-era request to the replica holding its
// session (Router), so that a load balancer needs no affinity.
package peer

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strings"
)

// Header carries the channel's credential on every request between
// replicas. It is a header of its own, not Authorization: a forwarded
// request keeps its client's Authorization, which the replica holding the
// session checks again in team mode.
const Header = "Plexus-Peer-Credential"

// CredentialLabel is what the store's key is derived with (HMAC) into the
// channel's credential: never the key itself, the loopback token, or
// anything a member holds.
const CredentialLabel = "plexus internal channel v1"

// Credentials are the channel's credentials: the one this replica sends
// (of the store's current key), and every one it takes (also of the old
// keys of a rotation, so that replicas not yet restarted reach it).
type Credentials struct {
	send   string
	accept [][sha256.Size]byte
}

// NewCredentials makes the credentials of derived, the store's keys
// derived with CredentialLabel, the current key's first.
func NewCredentials(derived [][]byte) Credentials {
	var c Credentials
	for i, d := range derived {
		s := base64.RawURLEncoding.EncodeToString(d)
		if i == 0 {
			c.send = s
		}
		c.accept = append(c.accept, sha256.Sum256([]byte(s)))
	}
	return c
}

// ok reports whether got is a credential c takes, in time that does not
// depend on got (hashes of equal length are compared, every one).
func (c Credentials) ok(got string) bool {
	h := sha256.Sum256([]byte(got))
	match := 0
	for _, a := range c.accept {
		match |= subtle.ConstantTimeCompare(h[:], a[:])
	}
	return got != "" && match == 1
}

// Guard serves next only requests that carry one of c's credentials in
// Header, which it removes before next sees the request; anything else is
// 401, and the credential it carried is never logged.
func Guard(c Credentials, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimSpace(r.Header.Get(Header))
		r.Header.Del(Header)
		if !c.ok(got) {
			log.Warn("internal channel: a request without the replicas' credential refused",
				"remote", r.RemoteAddr, "path", r.URL.Path, "had_credential", got != "")
			http.Error(w, "this is the internal channel between Plexus replicas", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

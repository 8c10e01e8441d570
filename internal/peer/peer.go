// Package peer is the internal channel between the replicas of a team
// (docs/team.md): each replica's row in the shared database, kept by
// heartbeats (Registry); the per-request MAC every request on the channel
// carries, made under a key derived from the store's key, and the guard
// that demands it (auth.go); session ids that name the replica that
// minted them (NewSessionID, ReplicaOf); the router that hands a
// session-era request to the replica holding its session (Router), so
// that a load balancer needs no affinity; and the leases that put each
// stdio server on one replica, spread over them (Owners).
package peer

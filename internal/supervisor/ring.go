package supervisor

import "sync"

// ringSize is how many stderr lines a server keeps (R-RUN-2).
const ringSize = 200

// ring keeps a server's last stderr lines across restarts, so that the
// lines before a crash are still there after the restart. Every line has
// a sequence number, so that a follower can ask for what is new.
type ring struct {
	mu      sync.Mutex
	lines   [ringSize]string // guarded by mu
	nextSeq int64            // guarded by mu; seq of the next line
}

func (r *ring) add(line string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := r.nextSeq
	r.lines[seq%ringSize] = line
	r.nextSeq++
	return seq
}

// snapshot returns the kept lines, oldest first, and the next sequence
// number.
func (r *ring) snapshot() ([]string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := max(r.nextSeq-ringSize, 0)
	out := make([]string, 0, r.nextSeq-first)
	for seq := first; seq < r.nextSeq; seq++ {
		out = append(out, r.lines[seq%ringSize])
	}
	return out, r.nextSeq
}

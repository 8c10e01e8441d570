package lifeline

import "time"

// WaitGroupGone polls until no live process is left in the group, for at most
// d. Zombies count as gone: reaping orphans is their new parent's job.
func WaitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !GroupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

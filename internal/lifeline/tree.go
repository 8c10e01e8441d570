//go:build linux || darwin

package lifeline

// walkChildren lists root's descendants, breadth first, from a map of each
// process to its children.
func walkChildren(children map[int][]int, root int) []int {
	var out []int
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

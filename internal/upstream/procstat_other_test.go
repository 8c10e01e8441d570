//go:build unix && !linux

package upstream

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// procStat approximates the Linux helper: it cannot tell zombies apart.
func procStat(pid string) (state byte, pgrp int, ok bool) {
	n, err := strconv.Atoi(pid)
	if err != nil {
		return 0, 0, false
	}
	pgrp, err = unix.Getpgid(n)
	return 'R', pgrp, err == nil
}

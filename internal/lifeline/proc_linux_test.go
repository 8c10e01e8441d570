//go:build linux

package lifeline

import "testing"

// TestParseStat: comm may hold spaces and parentheses.
func TestParseStat(t *testing.T) {
	s, ok := parseStat([]byte("42 (a (b) c) S 7 9 9 0 -1"))
	if !ok || s.state != 'S' || s.ppid != 7 || s.pgrp != 9 {
		t.Errorf("parseStat = %+v, %v", s, ok)
	}
	if _, ok := parseStat([]byte("42 (x")); ok {
		t.Error("parseStat accepted a line without the end of comm")
	}
}

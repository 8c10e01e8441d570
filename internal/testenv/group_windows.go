package testenv

import "os/exec"

// own leaves cmd as it is: Windows has neither process groups that can be
// killed as one nor a parent-death signal (a Job Object would be both; the
// harness does not make one).
func own(*exec.Cmd) {}

// endGroup does nothing on Windows: the test's own cleanup kills its child.
func endGroup(int) {}

// keep does nothing on Windows (see endGroup).
func keep(int, bool) {}

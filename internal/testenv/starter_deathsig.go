//go:build linux || freebsd

package testenv

import (
	"runtime"
	"sync"
	"syscall"
)

// deathSig has the kernel kill the child when its parent dies.
func deathSig(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

var starter struct {
	once sync.Once
	jobs chan func()
}

// onStarterThread runs f on the starter thread and returns its error.
func onStarterThread(f func() error) error {
	starter.once.Do(func() {
		starter.jobs = make(chan func())
		go starterLoop(starter.jobs)
	})
	done := make(chan error, 1)
	starter.jobs <- func() { done <- f() }
	return <-done
}

// starterLoop runs jobs on one OS thread that it never gives back: the
// thread lives as long as the test binary, so the parent-death signal of a
// child started on it fires only when the binary dies. (Linux ties the
// signal to the starting thread, and the Go runtime ends a thread whose
// goroutine exits while locked to it.)
func starterLoop(jobs <-chan func()) {
	runtime.LockOSThread()
	for job := range jobs {
		job()
	}
}

//go:build unix

package face

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSpawn is a request's goroutine, whose work needs 8 KiB of stack
// (a call's way through the host and the upstream needs more than a new
// goroutine's 2 KiB): a new goroutine for each (as it was) against
// session.spawn's workers, 16 requests in flight.
func BenchmarkSpawn(b *testing.B) {
	run := func(b *testing.B, start func(func())) {
		b.ReportAllocs()
		var wg sync.WaitGroup
		cpu := cpuTime()
		for b.Loop() {
			wg.Add(16)
			for range 16 {
				start(func() {
					useStack(8 << 10)
					wg.Done()
				})
			}
			wg.Wait()
		}
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	}
	b.Run("go", func(b *testing.B) { run(b, func(job func()) { go job() }) })
	b.Run("spawn", func(b *testing.B) {
		s := &session{done: make(chan struct{}), work: make(chan func())}
		defer close(s.done)
		run(b, s.spawn)
	})
}

// useStack uses about n bytes of stack.
//
//go:noinline
func useStack(n int) byte {
	var buf [512]byte
	buf[n%512] = byte(n)
	if n <= 512 {
		return buf[0]
	}
	return useStack(n-512) + buf[1]
}

// TestSpawnedWorkersEnd checks a session's workers run every job given
// them and end with the session, none kept beyond maxIdleWorkers.
func TestSpawnedWorkersEnd(t *testing.T) {
	s := &session{done: make(chan struct{}), work: make(chan func())}
	var wg, ran sync.WaitGroup
	release := make(chan struct{})
	wg.Add(40)
	ran.Add(40)
	for range 40 {
		s.spawn(func() {
			defer wg.Done()
			ran.Done()
			<-release
		})
	}
	ran.Wait() // 40 at once: 40 workers
	close(release)
	wg.Wait()
	waitFor(t, func() bool { return s.idleWorkers.Load() == maxIdleWorkers })
	wg.Add(1)
	s.spawn(wg.Done) // an idle worker takes it
	wg.Wait()
	close(s.done)
	waitFor(t, func() bool { return s.idleWorkers.Load() == 0 })
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
	}
}

// cpuTime is this process's CPU time so far (user and system), in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

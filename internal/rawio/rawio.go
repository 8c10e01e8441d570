// Package rawio reads and writes the descriptors a process waits on most —
// pipes to a server, connections of a client — with raw system calls that
// wait in the Go runtime's network poller, on Linux. A system call made
// the usual way tells the scheduler it enters the kernel, and that wakes
// the runtime's monitor thread (sysmon) whenever it sleeps because the
// process had gone idle; the monitor then polls every 20 µs or so until
// the process idles again. A proxy idles between bursts of messages
// thousands of times a second under a busy client, so each burst paid a
// thread wake-up and a few polls of the monitor beside the reads and
// writes it made (docs/performance.md). A read or write of a non-blocking
// descriptor never blocks, so it has no need of the scheduler's hand-off.
//
// File, Conn and Listener return what they are given, unchanged, where
// the descriptor is not non-blocking and in the poller, and on every
// system but Linux. Deadlines, Close and the errors of os.File and
// net.Conn keep working: the waits are the poller's own.
package rawio

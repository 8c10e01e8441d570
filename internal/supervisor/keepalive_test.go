//go:build unix

package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestHungServerIsRestarted: a server that stops answering (SIGSTOP: its
// process is alive, its pipes open) fails its keepalive pings and is
// treated as crashed — restarted, not left hanging (R-SUP-2).
func TestHungServerIsRestarted(t *testing.T) {
	bin := testenv.Binary(t)
	p := StdioPolicy(5)
	p.Initial, p.KeepAlive, p.KeepAliveMisses = 50*time.Millisecond, 100*time.Millisecond, 2
	s := New(Params{
		Name:   "hung",
		Config: config.Server{Type: config.TypeStdio, Command: bin, Args: []string{"example-server"}},
		Spec: upstream.Spec{Name: "hung", Type: "stdio", Argv: []string{bin, "example-server"}, Dir: t.TempDir(),
			Shim: []string{bin, "__plexus-shim"}, StopGrace: 200 * time.Millisecond},
		Policy: p,
	})
	defer s.Stop()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	pgid := s.Status().PID
	// Stop every process of the group but the shim: the server hangs.
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pgid, syscall.SIGCONT) // the shim itself keeps running

	deadline := time.Now().Add(30 * time.Second)
	for {
		st := s.Status()
		if st.State == StateReady && st.Restarts == 1 {
			if !strings.Contains(st.LastError, "keepalive failed") {
				t.Fatalf("last error %q does not say the keepalive failed", st.LastError)
			}
			if st.PID == pgid {
				t.Fatal("the hung process was not replaced")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted after hanging: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for end := time.Now().Add(30 * time.Second); liveInGroup(pgid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the hung server's group %d still has live processes", pgid)
		}
	}
}

// liveInGroup reports whether a process of group pgid is alive; zombies
// (dead, waiting for init to reap them) do not count.
func liveInGroup(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		fields := strings.Fields(rest)
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			return true
		}
	}
	return false
}

//go:build unix

package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a throwaway PostgreSQL cluster: initdb into a temporary
// directory, postgres on 127.0.0.1 on a free port with its unix sockets in
// that directory, stopped and removed when the test ends. PostgreSQL
// refuses to run as root, so as root it runs as the postgres user (or
// nobody), the directory chowned to it.
type Postgres struct {
	t    testing.TB
	URL  string // postgres://…, trusting the loopback user plexus
	Port int
	bin  string
	dir  string
	cred *syscall.Credential
	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{}
}

// postgresBin returns the directory of PostgreSQL's server binaries, the
// newest version installed, or "".
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// StartPostgres starts a cluster, or skips the test when PostgreSQL is not
// installed.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		t.Skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install postgresql; .ci/run installs it")
	}
	dir, err := os.MkdirTemp("", "plexus-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &Postgres{t: t, bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		p.cred = unprivileged(t)
		if err := os.Chown(dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	initdb := p.command("initdb", "-D", p.data(), "-U", "plexus", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.Port = FreePort(t) // the port stays the test's while the server is stopped and started again
	p.URL = fmt.Sprintf("postgres://plexus@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

// unprivileged is the uid PostgreSQL runs as under root.
func unprivileged(t testing.TB) *syscall.Credential {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	t.Skip("PostgreSQL refuses to run as root, and there is no postgres or nobody user to run it as")
	return nil
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

func (p *Postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	return cmd
}

// Start starts the server (again, after Stop, on the same port) and
// waits until it accepts connections.
func (p *Postgres) Start() {
	p.t.Helper()
	p.cmd = p.command("postgres", "-D", p.data(), "-p", strconv.Itoa(p.Port), "-h", "127.0.0.1", "-k", p.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=60")
	p.out = &SyncBuffer{}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(p.cmd, p.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, p.URL)
		if err == nil {
			conn.Close(ctx)
			cancel()
			return
		}
		cancel()
		select {
		case <-p.done:
			p.t.Fatalf("postgres exited at start:\n%s", p.out)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("postgres not ready after 30s: %v\n%s", err, p.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the server (a fast shutdown: open connections are ended)
// and waits for it.
func (p *Postgres) Stop() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	p.cmd = nil
}

// Database creates a fresh database in the cluster and returns its URL.
func (p *Postgres) Database(name string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.URL)
	if err != nil {
		p.t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		p.t.Fatal(err)
	}
	return fmt.Sprintf("postgres://plexus@127.0.0.1:%d/%s?sslmode=disable", p.Port, name)
}

// Dump returns pg_dump's plain dump of the database: every table's rows.
func (p *Postgres) Dump(url string) []byte {
	p.t.Helper()
	cmd := exec.Command(filepath.Join(p.bin, "pg_dump"), "--data-only", "-d", url)
	out, err := cmd.Output()
	if err != nil {
		p.t.Fatalf("pg_dump: %v", err)
	}
	return out
}

// Freeze stops the server and every process it started (SIGSTOP), as a
// database host that stalls: connections are accepted by the kernel and
// answered by nobody, until Thaw. Linux only (it reads /proc).
func (p *Postgres) Freeze() { p.signalAll(syscall.SIGSTOP) }

// Thaw lets a frozen server run again (SIGCONT).
func (p *Postgres) Thaw() { p.signalAll(syscall.SIGCONT) }

// signalAll sends sig to the server and to its children (its backends,
// the checkpointer and the rest), the server first.
func (p *Postgres) signalAll(sig syscall.Signal) {
	p.t.Helper()
	if p.cmd == nil {
		p.t.Fatal("postgres is not running")
	}
	pid := p.cmd.Process.Pid
	pids := []int{pid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces; it ends at the last ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	for _, q := range pids {
		syscall.Kill(q, sig)
	}
}

// Command hostileserver is an MCP server over stdio that attacks its own
// sandbox on request, for the sandbox tests. Its one tool, attempt, takes
// {"attack": NAME, "target": TEXT} and answers "ok: …" when the attack
// worked and "refused: …" (the error) when it did not; it never exits on a
// failed attack. A failure to refuse is the test's to judge.
//
// Attacks: read FILE, write FILE, cwd (answer the working directory), connect HOST:PORT, resolve HOST, env VAR,
// tunnel HOST:PORT (HTTP CONNECT through $HTTPS_PROXY, then GET / in the
// tunnel: answers the body), fetch URL (a plain HTTP GET through
// $HTTP_PROXY: answers the body), curl ARGS (run curl -sSf --max-time 10
// with the space-separated ARGS: a program of its own that honours the
// proxy variables; answers its output), udp HOST:PORT (send one
// datagram), raw (open a raw ICMP socket),
// setsid TOKEN and doublefork TOKEN (leave a process running `hostileserver
// linger TOKEN` outside the server's process group, by a new session or a
// double fork, and answer its pid), ptrace-sibling (start a child and
// PTRACE_ATTACH to it), forkbomb TOKEN (start a shell fork bomb marked with
// TOKEN in the background and answer at once).
//
// The escapes of R-SBX-4 (Linux): unix PATH or unix @NAME (connect to a
// pathname or abstract unix socket), daemon SOCKET|MARKER (ask the daemon's
// API to add an unsandboxed server whose command writes MARKER), userns and
// unshare (make a user namespace by clone, and by util-linux's unshare),
// ps TOKEN (list the processes, looking for one running TOKEN), mem PID
// (read another process's memory), kill PID, ptrace PID, symlink DIR|FILE
// and hardlink DIR|FILE (link to FILE from an allowed DIR and read it),
// sysvshm KEY (read a System V shared memory segment), setuid PROGRAM (run a
// setuid copy of this server as `whoami`: did it gain anything?), forks N
// (start N processes) and alloc MB (allocate MB MiB), each in a child.
//
// Run as `hostileserver linger TOKEN` it sleeps until killed.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type attemptInput struct {
	Attack string `json:"attack"`
	Target string `json:"target"`
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "linger" {
		time.Sleep(time.Hour)
		return
	}
	if len(os.Args) > 1 && runMode(os.Args[1:]) {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "hostileserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "attempt", Description: "Try to break out of the sandbox."},
		func(_ context.Context, _ *mcp.CallToolRequest, in attemptInput) (*mcp.CallToolResult, any, error) {
			msg, err := attempt(in.Attack, in.Target)
			if err != nil {
				msg = "refused: " + err.Error()
				// As a real program would, so that the daemon's log shows it.
				fmt.Fprintf(os.Stderr, "hostileserver: %s %s: %v\n", in.Attack, in.Target, err)
			} else {
				msg = "ok: " + msg
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "hostileserver:", err)
		os.Exit(1)
	}
}

func attempt(attack, target string) (string, error) {
	switch attack {
	case "read":
		b, err := os.ReadFile(target)
		return strings.TrimSpace(string(b)), err
	case "write":
		return "wrote " + target, os.WriteFile(target, []byte("hostile was here\n"), 0o600)
	case "connect":
		c, err := net.DialTimeout("tcp", target, 3*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return "connected to " + c.RemoteAddr().String(), nil
	case "tunnel":
		return tunnel(target)
	case "fetch":
		return fetch(target)
	case "curl":
		out, err := exec.Command("curl", append([]string{"-sSf", "--max-time", "10"}, strings.Fields(target)...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	case "udp":
		c, err := net.Dial("udp", target)
		if err != nil {
			return "", err
		}
		defer c.Close()
		if _, err := c.Write([]byte("hostile datagram")); err != nil {
			return "", err
		}
		return "sent a datagram to " + target, nil
	case "raw":
		const ipprotoICMP = 1 // ICMP's IANA protocol number; Windows's syscall has no name for it
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, ipprotoICMP)
		if err != nil {
			return "", fmt.Errorf("raw socket: %w", err)
		}
		syscall.Close(fd)
		return "opened a raw socket", nil
	case "cwd":
		return os.Getwd()
	case "env":
		v, ok := os.LookupEnv(target)
		if !ok {
			return "", fmt.Errorf("%s is not set", target)
		}
		return v, nil
	case "resolve":
		addrs, err := net.LookupHost(target)
		return strings.Join(addrs, ","), err
	case "setsid":
		return linger(target, newSessionAttr())
	case "doublefork":
		self, err := os.Executable()
		if err != nil {
			return "", err
		}
		// sh starts the linger in the background and exits: the linger is
		// reparented, in a group of its own.
		out, err := exec.Command("/bin/sh", "-c", `set -m; "$0" linger "$1" >/dev/null 2>&1 & echo $!`, self, target).Output()
		return "orphan pid " + strings.TrimSpace(string(out)), err
	case "ptrace-sibling":
		return ptraceSibling()
	case "forkbomb":
		// It forks until it cannot, and goes on trying: a shell that
		// cannot fork gives up, so a new one is started, for a minute.
		go func() {
			for end := time.Now().Add(time.Minute); time.Now().Before(end); {
				bomb := exec.Command("/bin/sh", "-c", `b() { b | b & }; while :; do b 2>/dev/null; done # `+target)
				if bomb.Start() != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				bomb.Wait()
			}
		}()
		return "fork bomb started", nil
	}
	if msg, err, ok := escape(attack, target); ok {
		return msg, err
	}
	return "", fmt.Errorf("unknown attack %q", attack)
}

func linger(token string, attr *syscall.SysProcAttr) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(self, "linger", token)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go cmd.Wait()
	return "pid " + strconv.Itoa(cmd.Process.Pid), nil
}

package sandbox

import (
	"fmt"
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// A server with a host:port list runs in a network namespace of its own,
// like one with network "none", but with its loopback up and one
// listening socket on it: the launcher makes the socket inside the
// namespace and hands it to the daemon (over the unix socket named in the
// policy, a path: the namespace does not hide the file system), which
// accepts on it and runs the filtering proxy (package egress) outside. The
// server's only way out is that proxy.

// openProxy brings the namespace's loopback up, listens on 127.0.0.1 and
// hands the listening socket to the daemon at sock. It returns the port.
// The launcher needs CAP_NET_ADMIN in its user namespace for the
// loopback: it is uid 0 there under a root daemon, and otherwise has it as
// an ambient capability (see Isolate), which it drops before the server
// runs.
func openProxy(sock string) (uint16, error) {
	if err := loopbackUp(); err != nil {
		return 0, fmt.Errorf("bringing up the sandbox's loopback: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("proxy socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, fmt.Errorf("proxy socket: bind: %w", err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return 0, fmt.Errorf("proxy socket: listen: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, fmt.Errorf("proxy socket: %w", err)
	}
	port := uint16(sa.(*unix.SockaddrInet4).Port)
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return 0, fmt.Errorf("reaching the daemon's proxy: %w", err)
	}
	defer c.Close()
	if _, _, err := c.WriteMsgUnix([]byte(strconv.Itoa(int(port))), unix.UnixRights(fd), nil); err != nil {
		return 0, fmt.Errorf("handing the proxy socket to the daemon: %w", err)
	}
	// The daemon answers once it serves, so that the server's first
	// connection does not race the proxy's start.
	var ack [1]byte
	if _, err := c.Read(ack[:]); err != nil {
		return 0, fmt.Errorf("the daemon's proxy did not start: %w", err)
	}
	return port, nil
}

// loopbackUp sets IFF_UP on the namespace's "lo".
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

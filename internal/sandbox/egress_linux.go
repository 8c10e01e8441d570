package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/plexus-mcp/plexus/internal/egress"
)

// Egress is the daemon's side of one start of a server with a host:port
// list: the unix socket its launcher hands the proxy's listening socket
// to, and the filtering proxy that serves it.
type Egress struct {
	dir   string
	ul    *net.UnixListener
	proxy *egress.Proxy
	done  chan struct{}

	mu     sync.Mutex
	closed bool
	conn   *net.UnixConn // the launcher's, while the socket is handed over
	once   sync.Once
}

// StartEgress prepares the proxy of p (network list; nil, nil otherwise)
// and sets p.ProxySocket for the launcher. denied gets Plexus's line about
// each refused connection. Close it once the server's processes are gone.
func StartEgress(p *Policy, denied func(string)) (*Egress, error) {
	if p.Network.Mode != NetworkList {
		return nil, nil
	}
	var allow []string
	for _, hp := range p.Network.Allow {
		allow = append(allow, hp.String())
	}
	var report func(string)
	if denied != nil {
		report = func(line string) { denied(deniedConnect(line)) }
	}
	proxy, err := egress.New(allow, report)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// A short path of its own: a unix socket's path has ~100 bytes.
	base := ""
	if len(os.TempDir()) > 64 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "plexus-egress-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: a folder for the proxy's socket: %w", err)
	}
	sock := filepath.Join(dir, "s")
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: the proxy's socket: %w", err)
	}
	e := &Egress{dir: dir, ul: ul, proxy: proxy, done: make(chan struct{})}
	p.ProxySocket = sock
	go e.run()
	return e, nil
}

// run takes the one listening socket the launcher sends and serves it.
func (e *Egress) run() {
	defer close(e.done)
	c, err := e.ul.AcceptUnix()
	e.ul.Close()
	os.RemoveAll(e.dir)
	if err != nil {
		return
	}
	defer c.Close()
	e.mu.Lock()
	e.conn = c
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return
	}
	ln, err := receiveListener(c)
	if err != nil {
		return // the launcher sees the connection end and refuses to run the server
	}
	if _, err := c.Write([]byte{1}); err != nil {
		ln.Close()
		return
	}
	e.proxy.Serve(ln)
}

// receiveListener reads one message carrying exactly one file descriptor,
// a listening TCP socket.
func receiveListener(c *net.UnixConn) (net.Listener, error) {
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4*4))
	_, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		f, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, f...)
		}
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("sandbox: the launcher sent no proxy socket")
	}
	f := os.NewFile(uintptr(fds[0]), "sandbox-proxy")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the launcher's proxy socket: %w", err)
	}
	if _, ok := ln.(*net.TCPListener); !ok {
		ln.Close()
		return nil, errors.New("sandbox: the launcher's proxy socket is not TCP")
	}
	return ln, nil
}

// Close stops the proxy (its listener and every connection) and removes
// the socket; safe on nil and more than once.
func (e *Egress) Close() {
	if e == nil {
		return
	}
	e.once.Do(func() {
		e.mu.Lock()
		e.closed = true
		if e.conn != nil {
			e.conn.Close()
		}
		e.mu.Unlock()
		e.ul.Close()
		e.proxy.Close()
		<-e.done
		e.proxy.Close() // a listener that arrived meanwhile
		os.RemoveAll(e.dir)
	})
}

package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
)

// Network modes.
const (
	NetworkNone = "none" // no socket beyond the server's stdio
	NetworkAll  = "all"  // the network is not restricted
	NetworkList = "list" // TCP only to the listed host:port pairs, through the daemon's proxy
)

// Policy is what one server may do. The daemon builds it from the server's
// configuration, with every path absolute; the launcher receives it as JSON.
type Policy struct {
	// Read and Write are folders (or files) the server may read, and read
	// and write. The system's read-only parts are added by the launcher.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Server is the server's name, for the advice in its denials.
	Server string `json:"server,omitempty"`
	// Default is set when the sandbox is a team replica's default, not
	// the server's settings: a start it stops says how to opt out.
	Default bool `json:"default,omitempty"`
	// Private is the server's own folder, outside Plexus's home: its
	// working directory unless Dir is set, writable, with its temporary
	// folder and its package caches under it.
	Private string `json:"private"`
	// Dir is the working directory the server was given, if any.
	Dir string `json:"dir,omitempty"`
	// Previous is where the private folder was kept before (under
	// Plexus's home); the first start moves it to Private.
	Previous string `json:"-"`
	// Hidden are folders the server never sees, whatever the rest says:
	// Plexus's home.
	Hidden []string `json:"hidden,omitempty"`
	// Secrets are files (or folders) of the daemon's own that the server
	// never reads, whatever the rest says: a team replica's store key and
	// URL files. Each is covered in the server's mount namespace — a file
	// by a device it cannot open, a folder by an empty tmpfs — so that a
	// folder holding one may still be read; a rule for a secret itself is
	// refused.
	Secrets []string `json:"secrets,omitempty"`
	Network Network  `json:"network"`
	Limits  Limits   `json:"limits"`
	// UID and GID are the daemon's user and group, which the launcher
	// maps to themselves in its user namespace (mapSelf); LauncherArgs
	// sets them.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// PidsCgroup, if set, is the pids cgroup the launcher joins (see
	// PreparePids).
	PidsCgroup string `json:"pidsCgroup,omitempty"`
	// ProxySocket, for network list, is the daemon's unix socket that the
	// launcher hands its proxy listener to (see StartEgress).
	ProxySocket string `json:"proxySocket,omitempty"`
}

// Network is what the server may reach.
type Network struct {
	Mode  string     `json:"mode"`
	Allow []HostPort `json:"allow,omitempty"` // Mode NetworkList
}

// HostPort is one allowed destination.
type HostPort struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

func (h HostPort) String() string { return net.JoinHostPort(h.Host, strconv.Itoa(int(h.Port))) }

// Limits are the server's resource limits (setrlimit). Processes counts
// threads too, and counts only the server's own: it runs in a user namespace
// of its own, where the kernel keeps a separate count.
type Limits struct {
	MemoryBytes uint64 `json:"memoryBytes"` // RLIMIT_DATA: heap and other private writable memory
	Processes   uint64 `json:"processes"`   // RLIMIT_NPROC
	OpenFiles   uint64 `json:"openFiles"`   // RLIMIT_NOFILE
}

// DefaultLimits leave room for Node.js and Python servers and their npx or
// uvx launchers, and stop a fork bomb or a runaway heap.
var DefaultLimits = Limits{MemoryBytes: 4 << 30, Processes: 256, OpenFiles: 1024}

// encode is the policy as the launcher's argument.
func (p *Policy) encode() (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: encoding the policy: %w", err)
	}
	return string(b), nil
}

func decodePolicy(s string) (*Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("sandbox: bad policy argument: %w", err)
	}
	switch p.Network.Mode {
	case NetworkNone, NetworkAll, NetworkList:
	default:
		return nil, fmt.Errorf("sandbox: unknown network mode %q", p.Network.Mode)
	}
	if p.Network.Mode == NetworkList && p.ProxySocket == "" {
		return nil, fmt.Errorf("sandbox: a host:port list without the daemon's proxy socket")
	}
	if p.Private == "" {
		return nil, fmt.Errorf("sandbox: the policy has no private folder")
	}
	return &p, nil
}

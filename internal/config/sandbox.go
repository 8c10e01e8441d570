package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Sandbox confines a stdio server: what it may read and write, and reach.
//
// In JSON it is an object, or false: "sandbox": false runs the server
// unconfined where the daemon would otherwise sandbox it by default (a
// team's replica, docs/team.md); without a sandbox a one-machine daemon
// runs it unconfined anyway.
type Sandbox struct {
	Filesystem SandboxFilesystem `json:"filesystem"`
	Network    SandboxNetwork    `json:"network"`
	// Limits are optional; zero fields take the defaults.
	Limits *SandboxLimits `json:"limits,omitempty"`
	// Off is "sandbox": false; the other fields are then empty.
	Off bool `json:"-"`
}

// Confines reports whether s asks for a sandbox: set, and not false.
func (s *Sandbox) Confines() bool { return s != nil && !s.Off }

// sandboxJSON is Sandbox's JSON shape without its methods.
type sandboxJSON Sandbox

// MarshalJSON writes false for Off, else the object.
func (s Sandbox) MarshalJSON() ([]byte, error) {
	if s.Off {
		return []byte("false"), nil
	}
	return json.Marshal(sandboxJSON(s))
}

// UnmarshalJSON reads false or the object, for clients of the settings
// API; extensions.json itself goes through Decode.
func (s *Sandbox) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "false" {
		*s = Sandbox{Off: true}
		return nil
	}
	var v sandboxJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Sandbox(v)
	return nil
}

// SandboxLimits are a sandboxed server's resource limits.
type SandboxLimits struct {
	MemoryMb  int `json:"memoryMb,omitempty"`  // heap and other private writable memory
	Processes int `json:"processes,omitempty"` // processes and threads, the server's own
	OpenFiles int `json:"openFiles,omitempty"`
}

// Bounds of the limits: below the minimums no server (nor the shim in front
// of it) runs.
const (
	MinSandboxMemoryMb  = 64
	MinSandboxProcesses = 32
	MinSandboxOpenFiles = 64
)

// SandboxFilesystem lists folders (or files): absolute, or under the home
// as "~/…".
type SandboxFilesystem struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// Network modes of a sandbox. A list of "host:port" is the third form.
const (
	SandboxNetworkNone = "none"
	SandboxNetworkAll  = "all"
)

// SandboxNetwork is "none", "all", or a list of "host:port". In JSON it is
// the string or the array; Allow is nil unless it is a list.
type SandboxNetwork struct {
	Mode  string   // SandboxNetworkNone or SandboxNetworkAll; "" for a list
	Allow []string // host:port, when Mode is ""
}

// StrictSandbox is the preset for an untrusted server: no network, and
// writes only to its private folder.
func StrictSandbox() *Sandbox {
	return &Sandbox{Network: SandboxNetwork{Mode: SandboxNetworkNone}}
}

// Clone returns a deep copy.
func (s *Sandbox) Clone() *Sandbox {
	c := *s
	c.Filesystem.Read = slices.Clone(s.Filesystem.Read)
	c.Filesystem.Write = slices.Clone(s.Filesystem.Write)
	c.Network.Allow = slices.Clone(s.Network.Allow)
	c.Limits = clonePtr(s.Limits)
	return &c
}

// Summary is the sandbox in one line: "network none; read /srv/docs;
// write ~/notes"; "" for false.
func (s *Sandbox) Summary() string {
	if s.Off {
		return ""
	}
	parts := []string{"network " + s.Network.String()}
	if s.Network.Mode == "" && len(s.Network.Allow) == 0 {
		parts[0] = "network none (empty list)"
	}
	if len(s.Filesystem.Read) > 0 {
		parts = append(parts, "read "+strings.Join(s.Filesystem.Read, ","))
	}
	if len(s.Filesystem.Write) > 0 {
		parts = append(parts, "write "+strings.Join(s.Filesystem.Write, ","))
	}
	return strings.Join(parts, "; ")
}

// String is the network as a person writes it: none, all, or the list.
func (n SandboxNetwork) String() string {
	if n.Mode != "" {
		return n.Mode
	}
	return strings.Join(n.Allow, ",")
}

// MarshalJSON writes the string or the array.
func (n SandboxNetwork) MarshalJSON() ([]byte, error) {
	if n.Mode != "" || n.Allow == nil {
		mode := n.Mode
		if mode == "" {
			mode = SandboxNetworkNone
		}
		return json.Marshal(mode)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(n.Allow)
	return bytes.TrimRight(buf.Bytes(), "\n"), err
}

// UnmarshalJSON reads the string or the array, for clients of the settings
// API; extensions.json itself goes through Decode.
func (n *SandboxNetwork) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = SandboxNetwork{Mode: s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf(`want "none", "all" or a list of "host:port"`)
	}
	if list == nil {
		list = []string{}
	}
	*n = SandboxNetwork{Allow: list}
	return nil
}

var (
	sandboxKeys   = jsonKeys[Sandbox]()
	sandboxFSKeys = jsonKeys[SandboxFilesystem]()
	limitsKeys    = jsonKeys[SandboxLimits]()
)

func (d *decoder) sandbox(path string, n *node) *Sandbox {
	if n.kind == boolKind {
		if n.boolean {
			d.add(path, "want an object (true is not a sandbox: {} is the strict one), or false to run the server unconfined")
		}
		return &Sandbox{Off: true}
	}
	s := StrictSandbox()
	if n.kind != objectKind {
		d.wrongType(path, "an object, or false", n)
		return s
	}
	d.object(path, n, sandboxKeys, func(key, p string, v *node) bool {
		switch key {
		case "filesystem":
			d.object(p, v, sandboxFSKeys, func(key, p string, v *node) bool {
				switch key {
				case "read":
					s.Filesystem.Read = d.strs(p, v)
				case "write":
					s.Filesystem.Write = d.strs(p, v)
				default:
					return false
				}
				return true
			})
		case "network":
			s.Network = d.sandboxNetwork(p, v)
		case "limits":
			s.Limits = &SandboxLimits{}
			d.object(p, v, limitsKeys, func(key, p string, v *node) bool {
				switch key {
				case "memoryMb":
					s.Limits.MemoryMb = d.int(p, v)
				case "processes":
					s.Limits.Processes = d.int(p, v)
				case "openFiles":
					s.Limits.OpenFiles = d.int(p, v)
				default:
					return false
				}
				return true
			})
		default:
			return false
		}
		return true
	})
	return s
}

const sandboxNetworkForm = `"none", "all" or a list of "host:port"`

func (d *decoder) sandboxNetwork(path string, n *node) SandboxNetwork {
	switch n.kind {
	case stringKind:
		return SandboxNetwork{Mode: n.text}
	case arrayKind:
		list := d.strs(path, n)
		if list == nil {
			list = []string{}
		}
		return SandboxNetwork{Allow: list}
	}
	d.wrongType(path, sandboxNetworkForm, n)
	return SandboxNetwork{Mode: SandboxNetworkNone}
}

func validateSandbox(ps *problems, p string, s Sandbox) {
	if s.Off {
		return
	}
	fs := KeyPath(p, "filesystem")
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read", s.Filesystem.Read}, {"write", s.Filesystem.Write}} {
		for i, path := range list.paths {
			if err := CheckSandboxPath(path); err != nil {
				ps.add(IndexPath(KeyPath(fs, list.key), i), err.Error())
			}
		}
	}
	if l := s.Limits; l != nil {
		lp := KeyPath(p, "limits")
		for _, c := range []struct {
			key      string
			v, least int
		}{{"memoryMb", l.MemoryMb, MinSandboxMemoryMb}, {"processes", l.Processes, MinSandboxProcesses}, {"openFiles", l.OpenFiles, MinSandboxOpenFiles}} {
			if c.v != 0 && c.v < c.least {
				ps.add(KeyPath(lp, c.key), fmt.Sprintf("must be at least %d (or left out for the default)", c.least))
			}
		}
	}
	np := KeyPath(p, "network")
	switch s.Network.Mode {
	case SandboxNetworkNone, SandboxNetworkAll:
	case "":
		for i, hp := range s.Network.Allow {
			if _, _, err := ParseHostPort(hp); err != nil {
				ps.add(IndexPath(np, i), err.Error())
			}
		}
	default:
		ps.add(np, fmt.Sprintf("unknown network %q: want %s", shorten(s.Network.Mode), sandboxNetworkForm))
	}
}

// CheckSandboxPath accepts an absolute path or one under the home ("~" or
// "~/…"), clean, without NUL.
func CheckSandboxPath(path string) error {
	switch {
	case path == "":
		return fmt.Errorf("is empty: want an absolute folder or ~/folder")
	case strings.ContainsRune(path, 0):
		return fmt.Errorf("contains a NUL byte")
	case path == "~" || strings.HasPrefix(path, "~/") || strings.HasPrefix(path, "/"):
	default:
		return fmt.Errorf("%q is relative: want an absolute folder or ~/folder", shorten(path))
	}
	for _, part := range strings.Split(path, "/") {
		if part == ".." {
			return fmt.Errorf("%q has a .. part: write the folder itself", shorten(path))
		}
	}
	return nil
}

// ParseHostPort parses "host:port" of a sandbox's network list: a host
// name or IP address (IPv6 in brackets) and a port from 1 to 65535.
func ParseHostPort(s string) (host string, port uint16, err error) {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port (e.g. api.github.com:443)", shorten(s))
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("%q: the port must be a number from 1 to 65535", shorten(s))
	}
	if net.ParseIP(h) == nil && !validHostName(h) {
		return "", 0, fmt.Errorf("%q: %q is not a host name or IP address", shorten(s), shorten(h))
	}
	return h, uint16(n), nil
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

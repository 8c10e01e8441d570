package sandbox

import (
	"fmt"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockConfigs are go-landlock's full configurations by ABI version;
// the sandbox uses the kernel's newest that go-landlock knows.
var landlockConfigs = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}

// restrictLandlock applies the file rules, the TCP rules and the IPC scopes
// to the calling thread, which must be locked and exec next. It is strict: a kernel without what the
// policy needs is an error (the daemon checks first, with Missing).
func restrictLandlock(p *Policy, files []access, proxyPort uint16) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < landlockMinABI {
		return fmt.Errorf("this kernel offers no Landlock of ABI %d or later: %v", landlockMinABI, err)
	}
	cfg := landlockConfigs[min(abi, len(landlockConfigs)-1)]
	var rules []landlock.Rule
	for _, a := range files {
		switch {
		case a.dir && a.write:
			rules = append(rules, landlock.RWDirs(a.path).WithRefer())
		case a.dir:
			rules = append(rules, landlock.RODirs(a.path))
		case a.write:
			rules = append(rules, landlock.RWFiles(a.path))
		default:
			rules = append(rules, landlock.ROFiles(a.path))
		}
	}
	switch p.Network.Mode {
	case NetworkAll:
		cfg.HandledAccessNet = 0
	case NetworkList:
		// The network namespace's only way out is the daemon's proxy on
		// its loopback; with ABI 4 every other port is refused as well,
		// and so is bind, as a second wall.
		if abi >= landlockNetABI {
			rules = append(rules, landlock.ConnectTCP(proxyPort))
		}
	case NetworkNone:
		// The network namespace has no way out; with ABI 4 TCP is refused
		// as well, as a second wall.
	}
	// This thread only (it holds no_new_privs and will exec the server):
	// go-landlock's Restrict would reach every thread through libpsx, which
	// spins forever as the first process of a PID namespace.
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	defer syscall.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

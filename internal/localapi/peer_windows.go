package localapi

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID of <afunix.h>,
// _WSAIOR(IOC_VENDOR, 256): the pid of the process at the other end of an
// AF_UNIX socket.
const sioAFUnixGetPeerPID = 0x58000100

// peerAllowed admits a peer process whose token's user is the daemon's own
// user. The socket's folder admits only that user too (daemon), so this is
// the second of two locks. Never run: written for Windows 10 1803 and later,
// which have AF_UNIX.
func peerAllowed(fd uintptr) error {
	var pid uint32
	var n uint32
	err := windows.WSAIoctl(windows.Handle(fd), sioAFUnixGetPeerPID, nil, 0,
		(*byte)(unsafe.Pointer(&pid)), uint32(unsafe.Sizeof(pid)), &n, nil, 0)
	if err != nil || n != uint32(unsafe.Sizeof(pid)) || pid == 0 {
		return errors.New("the caller's identity cannot be checked")
	}
	peer, err := processUser(pid)
	if err != nil {
		return errors.New("the caller's identity cannot be checked")
	}
	self, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return errors.New("the caller's identity cannot be checked")
	}
	if !windows.EqualSid(peer, self.User.Sid) {
		return errors.New("the caller runs as " + peer.String() + ", not as the daemon's user")
	}
	return nil
}

// processUser returns the user SID of process pid's token.
func processUser(pid uint32) (*windows.SID, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return nil, err
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return nil, err
	}
	return u.User.Sid.Copy()
}

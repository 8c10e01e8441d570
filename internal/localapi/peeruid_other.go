//go:build unix && !linux && !darwin && !freebsd

package localapi

import "errors"

// peerUID: no peer check is known here, so every caller is refused.
func peerUID(int) (uint32, error) {
	return 0, errors.New("no peer credentials on this platform")
}

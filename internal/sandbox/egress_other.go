//go:build !linux

package sandbox

import "errors"

// Egress is Linux's; Missing refuses the sandbox elsewhere.
type Egress struct{}

// StartEgress refuses off Linux.
func StartEgress(p *Policy, denied func(string)) (*Egress, error) {
	if p.Network.Mode != NetworkList {
		return nil, nil
	}
	return nil, errors.New("sandbox: a host:port list needs Linux")
}

// Close does nothing.
func (e *Egress) Close() {}

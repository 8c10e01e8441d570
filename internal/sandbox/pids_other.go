//go:build !linux

package sandbox

// PreparePids does nothing off Linux; Missing refuses the sandbox there.
func PreparePids(p *Policy) error { return nil }

// ReleasePids does nothing off Linux.
func ReleasePids(p *Policy) {}

package localapi

import (
	"net"
	"strings"
	"testing"
)

// FuzzLoopbackHost: a Host header passes only if its host part is exactly
// 127.0.0.1, ::1 (bracketed) or localhost, and its port, if any, a number.
func FuzzLoopbackHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1:7780", "[::1]:7780", "localhost", "LocalHost:1", "[::ffff:127.0.0.1]:7780",
		"127.0.0.2:7780", "2130706433", "[::1]", "::1", "127.0.0.1:", "127.0.0.1:0", "[127.0.0.1]:80", "localhost.:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, hostport string) {
		if !LoopbackHost(hostport) {
			return
		}
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
		} else if port == "" || strings.Trim(port, "0123456789") != "" {
			t.Fatalf("%q passed with port %q", hostport, port)
		}
		if host != "127.0.0.1" && host != "::1" && !strings.EqualFold(host, "localhost") {
			t.Fatalf("%q passed with host %q", hostport, host)
		}
		if host == "::1" && !strings.HasPrefix(hostport, "[") {
			t.Fatalf("%q passed without brackets", hostport)
		}
	})
}

package loadtest

import (
	"strings"
	"testing"
	"time"
)

func TestSummarise(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- { // reversed: summarise sorts
		d = append(d, time.Duration(i)*time.Microsecond)
	}
	got := summarise(d)
	want := Latency{P50: 50, P90: 90, P99: 99, Max: 100}
	if got != want {
		t.Errorf("summarise(1..100µs) = %+v, want %+v", got, want)
	}
	if got := summarise([]time.Duration{7 * time.Microsecond}); got != (Latency{7, 7, 7, 7}) {
		t.Errorf("summarise(one) = %+v", got)
	}
	if got := summarise(nil); got != (Latency{}) {
		t.Errorf("summarise(nil) = %+v", got)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestResolveTool(t *testing.T) {
	list := func(names ...string) []string { return names }
	for _, tc := range []struct {
		tools   []string
		want    string
		server  string
		got     string
		problem string
	}{
		{list("echo", "mcp_s1_echo_abcdefgh"), "echo", "", "echo", ""},
		{list("plexus_status", "mcp_s1_echo_abcdefgh"), "echo", "", "mcp_s1_echo_abcdefgh", ""},
		{list("mcp_s1_echo_abcdefgh", "mcp_s2_echo_bcdefghi"), "echo", "", "", "ambiguous"},
		{list("mcp_s1_echo_abcdefgh", "mcp_s10_echo_bcdefghi"), "echo", "s1", "mcp_s1_echo_abcdefgh", ""},
		{list("mcp_s1_echo_abcdefgh"), "mcp_s1_echo_abcdefgh", "", "mcp_s1_echo_abcdefgh", ""},
		{list("mcp_s1_xecho_abcdefgh", "echoes"), "echo", "", "", `no tool "echo" among its 2 tools`},
		{list("plexus_status", "s1_echo"), "echo", "", "s1_echo", ""},
		{list("s1_echo", "s10_echo_abcd"), "echo", "s10", "s10_echo_abcd", ""},
		{list("s1_echo", "s2_echo"), "echo", "", "", "ambiguous"},
		{list("s1_xecho", "s1_echoes"), "echo", "", "", `no tool "echo" among its 2 tools`},
	} {
		got, err := resolveTool(tc.tools, tc.want, tc.server)
		if got != tc.got || (tc.problem == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("resolveTool(%s) = %q, %v; want %q, %q", tc.want, got, err, tc.got, tc.problem)
		}
	}
}

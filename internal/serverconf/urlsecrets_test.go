package serverconf

import (
	"strings"
	"testing"
)

func TestMoveURLSecrets(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		vars     []string
	}{
		{"https://h/mcp", "https://h/mcp", nil},
		{"https://h/mcp?team=blue", "https://h/mcp?team=blue", nil},
		{"https://h/mcp?api_key=CANARY-one&team=blue", "https://h/mcp?api_key=${SRV_API_KEY}&team=blue", []string{"SRV_API_KEY"}},
		{"https://h/mcp?token=CANARY%2Ftwo", "https://h/mcp?token=${SRV_TOKEN}", []string{"SRV_TOKEN"}},
		{"https://h/mcp?apiKey=${MINE}", "https://h/mcp?apiKey=${MINE}", nil},
		{"https://h/mcp?auth=1&sig=true", "https://h/mcp?auth=1&sig=true", nil},
		{"https://h/mcp?key=CANARY-a&key=CANARY-b", "https://h/mcp?key=${SRV_KEY}&key=${SRV_KEY_2}", []string{"SRV_KEY", "SRV_KEY_2"}},
		{"https://h/mcp?key=CANARY-a&key=CANARY-a", "https://h/mcp?key=${SRV_KEY}&key=${SRV_KEY}", []string{"SRV_KEY"}},
	} {
		got, moved := MoveURLSecrets("srv", tc.in)
		if got != tc.want {
			t.Errorf("MoveURLSecrets(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var vars []string
		for _, m := range moved {
			vars = append(vars, m.Var)
			if !strings.HasPrefix(m.Value, "CANARY") {
				t.Errorf("%q: moved %+v", tc.in, m)
			}
		}
		if strings.Join(vars, ",") != strings.Join(tc.vars, ",") {
			t.Errorf("MoveURLSecrets(%q) moved %v, want %v", tc.in, vars, tc.vars)
		}
		if strings.Contains(got, "CANARY") {
			t.Errorf("MoveURLSecrets(%q) left a secret in %q", tc.in, got)
		}
	}
}

func FuzzMoveURLSecrets(f *testing.F) {
	for _, s := range []string{"https://h/?api_key=abcdef", "https://h/?a=b&token=%zz", "https://h/?key=x#frag", "?", "https://h/?=&&token="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, moved := MoveURLSecrets("srv", raw)
		for _, m := range moved {
			if !IsVarName(m.Var) || !strings.Contains(got, "${"+m.Var+"}") {
				t.Fatalf("%q → %q: bad move %+v", raw, got, m)
			}
		}
		if len(moved) == 0 && got != raw {
			t.Fatalf("%q changed to %q with nothing moved", raw, got)
		}
	})
}

package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"A": "1", "B_2": "two", "EMPTY": "", "DOLLAR": "$A ${A} $$"})
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"$A", "1"},
		{"${A}", "1"},
		{"x$A-y", "x1-y"},
		{"$A$B_2", "1two"},
		{"${A}B_2", "1B_2"},
		{"$B_2.", "two."},
		{"[$EMPTY]", "[]"},
		{"$$", "$"},
		{"$$A", "$A"},
		{"$$$A", "$1"},
		{"cost: $$5", "cost: $5"},
		{"$DOLLAR", "$A ${A} $$"}, // values are not expanded again
		{"https://h/?t=${A}&u=$B_2", "https://h/?t=1&u=two"},
		{"ü${A}ö", "ü1ö"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, vars)
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	vars := env(map[string]string{"A": "1"})
	tests := []struct{ in, want string }{
		{"$MISSING", `environment variable "MISSING" is not set`},
		{"${A}${MISSING}", `environment variable "MISSING" is not set`},
		{"$", "malformed placeholder at character 1: a '$' ends the text"},
		{"abc$", "at character 4"},
		{"ü$", "at character 2"},
		{"$1", "a '$' is not followed by a variable name"},
		{"$-", "a '$' is not followed by a variable name"},
		{"${A", "'${' is not closed by '}'"},
		{"${}", "'${...}' does not hold a variable name"},
		{"${1A}", "'${...}' does not hold a variable name"},
		{"${A B}", "'${...}' does not hold a variable name"},
		{"${A:-x}", "'${...}' does not hold a variable name"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, vars)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Expand(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.want)
		}
	}
	_, err := Expand("x${NOPE}y", vars)
	var missing *MissingVarError
	if !errors.As(err, &missing) || missing.Name != "NOPE" {
		t.Errorf("Expand = %v, want *MissingVarError{NOPE}", err)
	}
	_, err = Expand("${bad-name}", vars)
	if errors.As(err, &missing) {
		t.Errorf("a syntax error is a *MissingVarError: %v", err)
	}
}

func TestPlaceholders(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"$$A", nil},
		{"https://${HOST}/$P?k=${KEY}&again=$HOST", []string{"HOST", "P", "KEY"}},
		{"$A ${B} $", []string{"A", "B"}}, // up to the malformed part
	}
	for _, tt := range tests {
		if got := Placeholders(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Placeholders(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVarNames(t *testing.T) {
	s := Server{
		Env:               map[string]Ref{"X": {Env: "E1"}, "Y": {Env: "SHARED"}},
		URL:               "https://${HOST}/?k=$KEY&s=$SHARED",
		Headers:           map[string]Value{"A": {Env: "H1"}, "B": {Text: "Bearer ${TOK} $$NOT"}},
		BearerTokenEnvVar: "BEARER",
		OAuth:             &OAuth{ClientSecret: &Ref{Env: "CS"}},
	}
	want := []string{"BEARER", "CS", "E1", "H1", "HOST", "KEY", "SHARED", "TOK"}
	if got := s.VarNames(); !slices.Equal(got, want) {
		t.Errorf("VarNames = %q, want %q", got, want)
	}
	if got := (Server{OAuth: &OAuth{}}).VarNames(); len(got) != 0 {
		t.Errorf("VarNames of an empty server = %q", got)
	}
}

package host

import (
	"encoding/json"
	"testing"
)

// TestQuoteNameIsMarshal: the name a forwarded call carries is the bytes
// json.Marshal writes for it, for plain names and for those that need an
// escape (quotes, backslashes, HTML's characters, control bytes, UTF-8,
// invalid UTF-8).
func TestQuoteNameIsMarshal(t *testing.T) {
	for _, name := range []string{"echo", "get_weather", "a.b-c:d/e", "", " spaced ", `q"uote`, `back\slash`,
		"<tag>", "a&b", "tab\there", "nl\n", "\x7f", "café", "日本", "\xff\xfe", "\u2028"} {
		want, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := quoteName(name); string(got) != string(want) {
			t.Errorf("quoteName(%q) = %s, want %s", name, got, want)
		}
	}
}

// BenchmarkQuoteName: a tool's name as the forwarded call's name.
func BenchmarkQuoteName(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		quoteName("get_current_weather")
	}
}

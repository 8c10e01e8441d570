//lint:file-ignore SA1019 the capabilities MCP 2026-07-28 deprecates (roots, sampling) are what these tests decode.

package face

import (
	"encoding/json"
	"testing"
)

// TestDecodeCaps: the capabilities a client declares are read whole, roots
// included (the SDK's struct leaves them out of encoding/json's reach),
// and a client without roots has none.
func TestDecodeCaps(t *testing.T) {
	caps, err := decodeCaps([]byte(`{"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if caps.RootsV2 == nil || !caps.RootsV2.ListChanged || caps.Sampling == nil || caps.Elicitation == nil {
		t.Errorf("decoded %+v (roots %+v)", caps, caps.RootsV2)
	}
	if refusal(caps, "roots/list") != nil {
		t.Error("a client that declared roots is refused roots/list")
	}
	caps, err = decodeCaps([]byte(`{"sampling":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if caps.RootsV2 != nil || refusal(caps, "roots/list") == nil {
		t.Errorf("a client without roots: %+v", caps.RootsV2)
	}
	if _, err := decodeCaps([]byte(`{"roots":1}`)); err == nil {
		t.Error("roots that are no object decoded")
	}
}

// FuzzDecodeCaps: any bytes decode or are refused, never panic; what
// decodes declares roots exactly when the input has a roots object
// (its key matched as encoding/json matches keys).
func FuzzDecodeCaps(f *testing.F) {
	for _, s := range []string{`{}`, `{"roots":{}}`, `{"roots":null}`, `{"roots":{"listChanged":true},"sampling":{"tools":{}}}`, `[]`, `{"roots":"x"}`, `{"elicitation":{"url":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		caps, err := decodeCaps(raw)
		if err != nil {
			return
		}
		var probe struct {
			Roots json.RawMessage `json:"roots"` // matched as encoding/json matches keys
		}
		json.Unmarshal(raw, &probe)
		wantRoots := probe.Roots != nil && string(probe.Roots) != "null"
		if (caps.RootsV2 != nil) != wantRoots {
			t.Errorf("%s: roots %+v", raw, caps.RootsV2)
		}
	})
}

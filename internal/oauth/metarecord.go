package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// metadataRecorder keeps the bodies of the JSON answers discovery gets, so
// that members the SDK's metadata type drops (DPoP's) can be read from the
// document the SDK accepted, without fetching it twice.
type metadataRecorder struct {
	base http.RoundTripper

	mu     sync.Mutex
	bodies [][]byte // guarded by mu
}

func (r *metadataRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	base := r.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	return resp, nil
}

// dpopAlgs returns dpop_signing_alg_values_supported of the recorded
// metadata document of issuer.
func (r *metadataRecorder) dpopAlgs(issuer string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		var doc struct {
			Issuer   string   `json:"issuer"`
			DPoPAlgs []string `json:"dpop_signing_alg_values_supported"`
		}
		if json.Unmarshal(b, &doc) == nil && doc.Issuer == issuer && doc.Issuer != "" {
			return doc.DPoPAlgs
		}
	}
	return nil
}

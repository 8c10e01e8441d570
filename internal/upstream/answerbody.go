package upstream

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// A JSON answer to a POST is read whole inside the HTTP round trip, before
// the SDK's streamable client sees the response. The SDK reads such a body
// on its own after the request has returned, with the request's context,
// and takes any failure to read it for a broken connection: it fails every
// call on the connection. So a caller that gave up after the answer's
// headers came and before its body did — a health check's timeout on a
// loaded machine, an agent's cancelled call — took the server away from
// every other caller, and the supervisor restarted it. Read here, giving up
// fails that one request, as giving up before the headers always did (the
// SDK treats a failed round trip as the request's own failure).

// readAnswer returns resp with its body in memory when it is a 2xx JSON
// answer to a POST. If the body cannot be read because the request's
// context ended, the round trip fails with that error. Any other read
// failure is left for the SDK to meet, after the bytes that did arrive: a
// body cut off by the server is the connection's trouble, as it was.
func readAnswer(req *http.Request, resp *http.Response) (*http.Response, error) {
	if req.Method != http.MethodPost || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Body == nil || resp.Body == http.NoBody {
		return resp, nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil && req.Context().Err() != nil {
		return nil, fmt.Errorf("reading the answer: %w", req.Context().Err())
	}
	if err != nil {
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), failingReader{err}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// failingReader returns its error on every read.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

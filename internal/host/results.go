package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// Result caps (maxResultBytes). A result larger than its server's cap is
// never cut short, nor handed to the client whole: the daemon keeps it for
// a while and answers the call with a resource_link to it, which the
// client reads in pages of at most the cap. What is kept is bounded in
// total; the oldest goes first, and each expires on its own.
//
// A kept result belongs to whoever made the call (resultOwner): the host
// session it was made in and, in team mode, the member who made it. Only
// they read it (Session.ReadResult); to anyone else — another session, of
// the same profile or not, another member — it answers exactly as an id
// that was never kept does, page for page, so that a link that leaked
// (into a shared transcript, a log, another tool's input) reads nothing
// and does not even tell that the result exists.
//
// In a team, a result is kept by the replica whose face the call came
// to, and its id names that replica (NameResults): a read that lands on
// another replica is passed to that one over the internal channel, which
// answers it as if the client had come to it directly (docs/team.md). A
// call another replica makes of a stdio server this one runs is never
// capped here (CappedByCaller): the replica the client called caps it,
// where its client reads.

// ResultsURI starts the URI of every kept result.
const ResultsURI = "plexus://results/"

const (
	resultsTTL   = 10 * time.Minute
	resultsTotal = 256 << 20
	minPage      = 4 << 10
)

// resultStore holds the results that were over their cap.
type resultStore struct {
	// name mints a kept result's id (NameResults); nil for 128 random
	// bits in hex. ttl is how long one is kept (resultsTTL; shorter in
	// tests).
	name func() string
	ttl  time.Duration

	mu    sync.Mutex
	byID  map[string]*keptResult
	order []string // oldest first
	total int
}

type keptResult struct {
	data  []byte // the result as the server gave it, JSON
	page  int    // bytes per page
	owner resultOwner
	timer *time.Timer
}

// resultOwner is who may read a kept result: the host session whose call
// made it ("" for a call made in none — the settings API's POST /v1/call,
// whose kept results no session reads) and the team member who made the
// call ("" on the one-machine daemon), named by their token's issuer and
// subject: a user name alone may repeat across issuers.
type resultOwner struct {
	session string
	member  string
}

type sessionKey struct{}

// inSession marks ctx as a call or read of session id: what the results
// it keeps belong to.
func inSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// ownerOf is who a call or read in ctx is made by.
func ownerOf(ctx context.Context) resultOwner {
	var o resultOwner
	o.session, _ = ctx.Value(sessionKey{}).(string)
	if id, ok := caller.From(ctx); ok {
		o.member = id.Issuer + "\n" + id.Subject
	}
	return o
}

// NameResults has every kept result's id minted by mint (a team's replica
// names itself in them, as in its session ids: internal/peer); set it
// before the host serves.
func (h *Host) NameResults(mint func() string) { h.results.name = mint }

type cappedKey struct{}

// CappedByCaller marks ctx as a call another replica makes on its
// client's behalf (a stdio server this one runs, served on the internal
// channel): its result comes back whole, and that replica caps it,
// keeping it where its client reads it.
func CappedByCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, cappedKey{}, true)
}

// capResult keeps a result over its server's cap and returns the link to
// it instead; any other result is returned as it is.
func (h *Host) capResult(ctx context.Context, ix indexed, snap *snapshot, out callResult) callResult {
	if by, _ := ctx.Value(cappedKey{}).(bool); by {
		return out
	}
	limit := ix.server.Config().MaxResultBytes
	if limit <= 0 {
		limit = config.DefaultMaxResultBytes
	}
	if out.raw != nil && int64(len(out.raw)) <= limit || out.res != nil && approxSize(out.res) <= limit {
		return out
	}
	data, err := out.bytes()
	if err != nil || int64(len(data)) <= limit {
		return out
	}
	_, span := tracing.StartStep(ctx, "keep result", tracing.Call{Tool: ix.entry.Name, Server: ix.entry.Server})
	id, pages, err := h.results.keep(data, int(max(limit, minPage)), ownerOf(ctx))
	span.End(err, tracing.ErrType(err))
	if err != nil {
		h.log.Warn("a result over its cap could not be kept", "server", ix.entry.Server, "bytes", len(data), "err", err)
		return callResult{res: errorResult(fmt.Sprintf("the result of %s was %s, over its maxResultBytes (%s), and %v", ix.entry.Server, size(len(data)), size(int(limit)), err), "result_too_large", "")}
	}
	h.log.Info("a result over its cap is kept as a resource", "server", ix.entry.Server, "bytes", len(data), "pages", pages)
	uri := ResultsURI + id + "/1"
	return callResult{res: &mcp.CallToolResult{
		Meta: mcp.Meta{"plexus/resultBytes": len(data), "plexus/pages": pages},
		Content: []mcp.Content{
			&mcp.TextContent{Text: fmt.Sprintf("The result of %s is %s, over its maxResultBytes (%s). Plexus keeps it for %s as the resource %s: read it there, in %d pages (each page's _meta names the next).",
				ix.entry.Server, size(len(data)), size(int(limit)), h.results.keepFor(), uri, pages)},
			&mcp.ResourceLink{URI: uri, Name: "result-" + id, Title: "The whole result of " + ix.entry.Tool, MIMEType: "application/json", Size: ptr(int64(len(data)))},
		},
	}}
}

func ptr[T any](v T) *T { return &v }

// approxSize is a result's size as JSON, from its content's lengths: the
// full encoding is made only for a result that may be over its cap.
func approxSize(res *mcp.CallToolResult) int64 {
	n := int64(64)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			n += int64(len(c.Text))
		case *mcp.ImageContent:
			n += int64(len(c.Data)*4/3 + 32)
		case *mcp.AudioContent:
			n += int64(len(c.Data)*4/3 + 32)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				n += int64(len(c.Resource.Text) + len(c.Resource.Blob)*4/3)
			}
		default:
			n += 256
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		n += int64(len(b))
	}
	return n
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// keep stores data for owner and returns its id and number of pages.
func (s *resultStore) keep(data []byte, page int, owner resultOwner) (string, int, error) {
	if len(data) > resultsTotal {
		return "", 0, fmt.Errorf("is larger than all Plexus keeps of results (%s)", size(resultsTotal))
	}
	id := s.newID()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]*keptResult{}
	}
	for s.total+len(data) > resultsTotal && len(s.order) > 0 {
		s.dropLocked(s.order[0])
	}
	k := &keptResult{data: data, page: page, owner: owner}
	k.timer = time.AfterFunc(s.keepFor(), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.dropLocked(id)
	})
	s.byID[id] = k
	s.order = append(s.order, id)
	s.total += len(data)
	return id, len(pages(data, page)), nil
}

func (s *resultStore) newID() string {
	if s.name != nil {
		return s.name()
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keepFor is how long a result is kept.
func (s *resultStore) keepFor() time.Duration {
	if s.ttl > 0 {
		return s.ttl
	}
	return resultsTTL
}

func (s *resultStore) dropLocked(id string) {
	k, ok := s.byID[id]
	if !ok {
		return
	}
	k.timer.Stop()
	delete(s.byID, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	s.total -= len(k.data)
}

// close drops everything.
func (s *resultStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.byID {
		s.dropLocked(id)
	}
}

// pages cuts data into pages of at most n bytes, each ending on a whole
// UTF-8 character, so that every page is valid text.
func pages(data []byte, n int) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		end := min(n, len(data))
		for end < len(data) && end > 0 && !utf8.RuneStart(data[end]) {
			end--
		}
		if end == 0 {
			end = min(n, len(data)) // not UTF-8: cut where the bytes say
		}
		out = append(out, data[:end])
		data = data[end:]
	}
	return out
}

// ResultPage is one page of a kept result.
type ResultPage struct {
	Text  string
	Page  int    // from 1
	Pages int    // in all
	Next  string // the next page's URI; "" on the last
}

// ReadResult reads a page of a kept result of the session's: uri is
// ResultsURI + id + "/" + page. ctx names the member reading, in team
// mode (caller.With), who must be the one who made the call. The error
// names what is wrong (unknown, expired, no such page); a result of
// another session or member is unknown.
func (s *Session) ReadResult(ctx context.Context, uri string) (ResultPage, error) {
	s.touch()
	return s.h.readResult(ownerOf(inSession(ctx, s.ID)), uri)
}

func (h *Host) readResult(reader resultOwner, uri string) (ResultPage, error) {
	rest, ok := strings.CutPrefix(uri, ResultsURI)
	id, pg, ok2 := strings.Cut(rest, "/")
	n, err := strconv.Atoi(pg)
	if !ok || !ok2 || err != nil || n < 1 {
		return ResultPage{}, &NotFoundError{What: "result", Name: uri}
	}
	s := &h.results
	s.mu.Lock()
	k := s.byID[id]
	s.mu.Unlock()
	// Another's result is not kept, as far as the reader can tell: the
	// same answer, before its page count can show. It names every reason
	// a result cannot be read, and claims none of them.
	if k == nil || k.owner != reader {
		return ResultPage{}, fmt.Errorf("result %s cannot be read: no result of yours is kept under this id (a result is kept for %s after its call, only for the client session and member whose call made it, and the oldest go first once %s are kept); call the tool again",
			id, s.keepFor(), size(resultsTotal))
	}
	ps := pages(k.data, k.page)
	if n > len(ps) {
		return ResultPage{}, &NotFoundError{What: "result page", Name: uri}
	}
	p := ResultPage{Text: string(ps[n-1]), Page: n, Pages: len(ps)}
	if n < len(ps) {
		p.Next = ResultsURI + id + "/" + strconv.Itoa(n+1)
	}
	return p, nil
}

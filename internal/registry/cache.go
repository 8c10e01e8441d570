package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// Cache keeps registry answers on disk, one file per URL asked, so that a
// search works offline with the last answer (and says how old it is).
// Only answers that decoded are kept.
type Cache struct {
	dir string
	// Max is how many answers are kept: the oldest beyond it go.
	Max int
}

// OpenCache returns the cache in dir (created 0700 when first written).
func OpenCache(dir string) *Cache { return &Cache{dir: dir, Max: 256} }

// cached is one kept answer.
type cached struct {
	URL       string          `json:"url"`
	FetchedAt time.Time       `json:"fetchedAt"`
	Body      json.RawMessage `json:"body"`
}

// maxCachedBytes bounds a cache file read back: what was written is
// bounded by the fetch's limit.
const maxCachedBytes = maxPageBytes + 4096

func (c *Cache) path(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".json")
}

func (c *Cache) load(url string) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	p := c.path(url)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCachedBytes {
		return cached{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return cached{}, false
	}
	var e cached
	if json.Unmarshal(b, &e) != nil || e.URL != url {
		return cached{}, false
	}
	return e, true
}

// store keeps body as url's answer. A cache that cannot be written only
// costs the offline answer: the error is not the request's.
func (c *Cache) store(url string, at time.Time, body []byte) {
	if c == nil || !json.Valid(body) {
		return
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	b, err := json.Marshal(cached{URL: url, FetchedAt: at.UTC(), Body: body})
	if err != nil {
		return
	}
	if atomicfile.WriteFile(c.path(url), b, 0o600) == nil {
		c.prune()
	}
}

// strayAge is how old a temporary file of a write must be before prune
// takes it for one a killed write left: a write in progress is younger.
const strayAge = time.Minute

// prune removes the oldest answers beyond Max, and the temporary files of
// writes killed before their rename.
func (c *Cache) prune() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if name, ok := strings.CutPrefix(e.Name(), "."); ok && isStray(name) {
			if time.Since(fi.ModTime()) > strayAge {
				_ = os.Remove(filepath.Join(c.dir, e.Name()))
			}
			continue
		}
		if strings.HasSuffix(e.Name(), ".json") {
			files = append(files, file{e.Name(), fi.ModTime()})
		}
	}
	if len(files) <= c.Max {
		return
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	for _, f := range files[min(len(files), c.Max):] {
		if err := os.Remove(filepath.Join(c.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// isStray reports whether name (without its leading dot) is a temporary
// file atomicfile.WriteFile makes for a cache answer: "HASH.json.tmp-N".
func isStray(name string) bool {
	answer, _, ok := strings.Cut(name, ".tmp-")
	return ok && len(answer) == 32+len(".json") && strings.HasSuffix(answer, ".json") && atomicfile.IsTemp("."+name, answer)
}

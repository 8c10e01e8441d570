package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"
)

// Filter selects records; a zero field matches all.
type Filter struct {
	Kind, Server, Tool, Member, Outcome string
	Since                               time.Time
}

// Match reports whether r passes f. Tool matches the server's name of a
// tool or its Plexus name.
func (f Filter) Match(r Record) bool {
	return (f.Kind == "" || r.Kind == f.Kind) &&
		(f.Server == "" || r.Server == f.Server) &&
		(f.Tool == "" || r.Tool == f.Tool || r.Name == f.Tool) &&
		(f.Member == "" || r.Member == f.Member) &&
		(f.Outcome == "" || r.Outcome == f.Outcome) &&
		(f.Since.IsZero() || !r.Time.Before(f.Since))
}

// Read calls fn for each record of the files at path that passes f,
// oldest first; fn returns false to stop. A line that does not parse (a
// file edited by hand) is skipped.
func Read(path string, maxFiles int, f Filter, fn func(Record) bool) error {
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	for i := maxFiles - 1; i >= 0; i-- {
		more, err := readFile(fileName(path, i), f, fn)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
	return nil
}

func readFile(name string, f Filter, fn func(Record) bool) (bool, error) {
	fh, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil || !f.Match(r) {
			continue
		}
		if !fn(r) {
			return false, nil
		}
	}
	return true, sc.Err()
}

// DefaultLast is how many records Last returns for n ≤ 0.
const DefaultLast = 1000

// Last returns the newest n records that pass f, oldest first.
func (l *Log) Last(f Filter, n int) ([]Record, error) {
	if l == nil {
		return nil, nil
	}
	if n <= 0 {
		n = DefaultLast
	}
	ring := make([]Record, 0, n)
	err := Read(l.opts.Path, l.MaxFiles(), f, func(r Record) bool {
		if len(ring) == n {
			copy(ring, ring[1:])
			ring = ring[:n-1]
		}
		ring = append(ring, r)
		return true
	})
	return ring, err
}

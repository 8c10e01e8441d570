package docstore

import (
	"bytes"
	"fmt"
	"slices"
)

// Copied is what Copy moved.
type Copied struct {
	Docs      []string // the documents copied
	Revisions int      // the kept versions copied
}

// Copy copies the documents names, and their kept versions, from one
// backend to another, then reads them back from the target and compares
// them with the source. A target that holds any of them already is
// refused unless overwrite; the target's own kept versions are never
// removed. The daemons of both must be stopped (the caller holds their
// locks, or says so).
func Copy(from, to Backend, names []string, overwrite bool) (Copied, error) {
	var out Copied
	if !overwrite {
		for _, name := range names {
			d, err := to.Read(name)
			if err != nil {
				return out, fmt.Errorf("reading the target: %w", err)
			}
			revs, err := to.Revisions(name)
			if err != nil {
				return out, fmt.Errorf("reading the target: %w", err)
			}
			if d.Exists || len(revs) > 0 {
				return out, fmt.Errorf("the target holds %s already: nothing was copied (give --force to copy over it)", to.Where(name))
			}
		}
	}
	type kept struct {
		rev  Revision
		data []byte
	}
	for _, name := range names {
		src, err := from.Read(name)
		if err != nil {
			return out, fmt.Errorf("reading %s: %w", from.Where(name), err)
		}
		revs, err := from.Revisions(name)
		if err != nil {
			return out, fmt.Errorf("listing the revisions of %s: %w", from.Where(name), err)
		}
		var all []kept
		for _, r := range slices.Backward(revs) { // oldest first
			data, err := from.RevisionData(name, r.Name)
			if err != nil {
				return out, fmt.Errorf("reading revision %s: %w", r.Name, err)
			}
			if err := to.AddRevision(name, r.Saved, data); err != nil {
				return out, err
			}
			all = append(all, kept{r, data})
		}
		out.Revisions += len(all)
		if !src.Exists {
			continue
		}
		cur, err := to.Read(name)
		if err != nil {
			return out, err
		}
		if _, err := to.Write(name, cur, src.Data, false); err != nil {
			return out, fmt.Errorf("writing %s: %w", to.Where(name), err)
		}
		// Read back what the target now holds.
		back, err := to.Read(name)
		if err != nil {
			return out, fmt.Errorf("reading back %s: %w", to.Where(name), err)
		}
		if !back.Exists || !bytes.Equal(back.Data, src.Data) {
			return out, fmt.Errorf("%s does not read back as it was written", to.Where(name))
		}
		got, err := to.Revisions(name)
		if err != nil {
			return out, err
		}
		for _, k := range all {
			i := slices.IndexFunc(got, func(r Revision) bool { return r.Saved.Equal(k.rev.Saved.Truncate(1000)) || r.Saved.Equal(k.rev.Saved) })
			if i < 0 {
				return out, fmt.Errorf("revision %s of %s does not read back", k.rev.Name, name)
			}
			data, err := to.RevisionData(name, got[i].Name)
			if err != nil || !bytes.Equal(data, k.data) {
				return out, fmt.Errorf("revision %s of %s does not read back as it was written", k.rev.Name, name)
			}
		}
		out.Docs = append(out.Docs, name)
	}
	return out, nil
}

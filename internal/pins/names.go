package pins

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/catalog"
)

// Names on the face. In the readable scheme (the default) a tool is
// offered as server_tool, suffixed only on a collision or past the length
// limit (catalog.AssignToolName). Whether a name collides depends on what
// came before, so it is given out once, when the tool is first pinned, and
// recorded in its pin (Tool.Name): a later tool whose plain name is taken
// gets the suffix, never the tool people already use, and a restart, or
// servers coming up in another order, changes nothing. A tool pinned before
// the readable scheme has no recorded name and keeps its hashed one
// (catalog.ToolName), and so do its server's operations while it has such
// tools: a person's permission rules written for those names still match.
// With hashed names (mcp.names = "hashed") every tool and operation has
// the seeds' hashed name, as the catalog builds it.
//
// Names given out are unique across the whole file, not only one server's
// tools: the face serves every server's tools in one list.

// SetHashedNames switches between the readable scheme (false, the default)
// and the seeds' hashed names (true). Every decision made before is stale
// afterwards (Version changes).
func (s *Store) SetHashedNames(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hashedNames != on {
		s.hashedNames = on
		s.namings++
	}
}

// NameOf returns the name under which tool of server is offered, or would
// be if it were offered now: what the pins recorded, or its hashed name.
func (s *Store) NameOf(server, tool string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nameLocked(server, tool)
}

func (s *Store) nameLocked(server, tool string) string {
	if !s.hashedNames {
		if pin, ok := s.f.Servers[server].Tools[tool]; ok && pin.Name != "" {
			return pin.Name
		}
	}
	return catalog.ToolName(server, tool)
}

// namer renames one server's entries as the scheme in force says.
type namer struct {
	hashed bool
	rec    Server
	// legacy: the server has tools pinned before the readable scheme, so
	// its operations keep their hashed names too.
	legacy bool
}

func (s *Store) namerLocked(server string) namer {
	n := namer{hashed: s.hashedNames, rec: s.f.Servers[server]}
	for _, t := range n.rec.Tools {
		if t.Name == "" {
			n.legacy = true
			break
		}
	}
	return n
}

// name is the name e is offered under; e.Name is its hashed name (the
// catalog's). A tool not pinned yet has the name it would get if nothing
// had its plain name.
func (n namer) name(e catalog.Entry) string {
	switch {
	case n.hashed:
		return e.Name
	case e.Kind != catalog.KindTool:
		if n.legacy {
			return e.Name
		}
		return catalog.ReadableOpName(e.Server, e.Kind)
	}
	if pin, ok := n.rec.Tools[e.Tool]; ok {
		if pin.Name != "" {
			return pin.Name
		}
		return e.Name
	}
	return catalog.ReadableName(e.Server, e.Tool)
}

// takenNames is every name f gives out: each pinned tool's, and the hashed
// names of every server's operations (which a server with tools pinned
// before the readable scheme keeps). The readable operation names need no
// place here: no tool's name can take one (catalog.AssignToolName).
func takenNames(f *File) map[string]bool {
	taken := map[string]bool{}
	for server, rec := range f.Servers {
		taken[catalog.OpName(server, catalog.KindReadResource)] = true
		taken[catalog.OpName(server, catalog.KindGetPrompt)] = true
		for tool, t := range rec.Tools {
			taken[pinnedName(server, tool, t)] = true
		}
	}
	return taken
}

// pinnedName is the name t, the pin of tool of server, gives out.
func pinnedName(server, tool string, t Tool) string {
	if t.Name != "" {
		return t.Name
	}
	return catalog.ToolName(server, tool)
}

// nameNew gives each tool of tools that has no pin in rec a name that
// nothing in taken has, in the order of their names (so that tools seen
// together are named the same whatever order they came in), and adds the
// names to taken. A tool pinned before keeps the name it had.
func nameNew(server string, rec Server, tools map[string]Tool, taken map[string]bool) {
	for _, tool := range slices.Sorted(maps.Keys(tools)) {
		t := tools[tool]
		if old, pinned := rec.Tools[tool]; pinned {
			t.Name = old.Name
		} else {
			t.Name = catalog.AssignToolName(server, tool, func(name string) bool { return taken[name] })
			taken[t.Name] = true
		}
		tools[tool] = t
	}
}

// duplicateNames reports two pins that give out the same name (a file
// edited by hand): the face would not know which tool a call is for.
func duplicateNames(f *File) []string {
	var problems []string
	owner := map[string]string{}
	for _, server := range slices.Sorted(maps.Keys(f.Servers)) {
		rec := f.Servers[server]
		for _, tool := range slices.Sorted(maps.Keys(rec.Tools)) {
			name := pinnedName(server, tool, rec.Tools[tool])
			path := "servers." + strconv.Quote(server) + ".tools." + strconv.Quote(tool) + ".name"
			if prev, ok := owner[name]; ok {
				problems = append(problems, fmt.Sprintf("%s: %q is given to %s too", path, name, prev))
				continue
			}
			owner[name] = path
		}
	}
	return problems
}

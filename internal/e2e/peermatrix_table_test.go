package e2e

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// matrixTable renders the matrix: one row per setup through Plexus, one
// column per operation, "=" where the cell equals direct and "#N" where it
// differs ("·" across a row whose client could not connect directly), N numbering the reasons listed below the table (one reason per
// distinct difference); then the differing cells per server. It returns
// the text, the number of differing cells and of cells.
func matrixTable(setups []matrixSetup, results map[string]matrixResult) (string, int, int) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	fmt.Fprint(tw, "setup (server/upstream/face/client@era)")
	for _, op := range matrixOps {
		fmt.Fprintf(tw, "\t%s", op)
	}
	fmt.Fprintln(tw)
	reasons := map[string]int{}
	var reasonList []string
	type count struct{ differ, total int }
	perServer := map[string]*count{}
	perServerOp := map[string]map[string]*count{}
	perClient := map[string]*count{}
	differ, total, unmatched := 0, 0, 0
	for _, s := range setups {
		if s.upstream == "direct" {
			continue
		}
		got, want := results[s.label()], results[s.directOf().label()]
		fmt.Fprint(tw, s.label())
		ps := perServer[s.server]
		if ps == nil {
			ps = &count{}
			perServer[s.server] = ps
		}
		pc := perClient[s.client+"@"+s.era]
		if pc == nil {
			pc = &count{}
			perClient[s.client+"@"+s.era] = pc
		}
		if noBaseline(want) {
			// The client cannot connect to the server directly (an era or
			// transport it lacks): there is nothing to be equal to.
			for range matrixOps {
				fmt.Fprint(tw, "\t·")
			}
			fmt.Fprintln(tw)
			unmatched++
			continue
		}
		if perServerOp[s.server] == nil {
			perServerOp[s.server] = map[string]*count{}
		}
		for _, op := range matrixOps {
			total++
			ps.total++
			pc.total++
			so := perServerOp[s.server][op]
			if so == nil {
				so = &count{}
				perServerOp[s.server][op] = so
			}
			so.total++
			w, g := want.obs[op], got.obs[op]
			if w == g {
				fmt.Fprint(tw, "\t=")
				continue
			}
			differ++
			ps.differ++
			pc.differ++
			so.differ++
			why := op + ": " + difference(w, g)
			n, ok := reasons[why]
			if !ok {
				reasonList = append(reasonList, why)
				n = len(reasonList)
				reasons[why] = n
			}
			fmt.Fprintf(tw, "\t#%d", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\n%d of %d cells differ from direct", differ, total)
	if unmatched > 0 {
		fmt.Fprintf(&b, " (%d rows · have no direct baseline: the client cannot connect to or use that server directly)", unmatched)
	}
	fmt.Fprintln(&b, ".")
	for _, group := range []struct {
		title string
		m     map[string]*count
	}{{"server", perServer}, {"client@era", perClient}} {
		keys := make([]string, 0, len(group.m))
		for k := range group.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "by %s:", group.title)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s %d/%d;", k, group.m[k].differ, group.m[k].total)
		}
		fmt.Fprintln(&b)
	}
	// The summary: per server and operation, how many of its setups
	// differ.
	fmt.Fprintln(&b, "\ndiffering setups per server and operation (of the setups with a direct baseline):")
	sw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	fmt.Fprint(sw, "server")
	for _, op := range matrixOps {
		fmt.Fprintf(sw, "\t%s", op)
	}
	fmt.Fprintln(sw, "\tcells")
	servers := make([]string, 0, len(perServerOp))
	for k := range perServerOp {
		servers = append(servers, k)
	}
	sort.Strings(servers)
	for _, srv := range servers {
		fmt.Fprint(sw, srv)
		for _, op := range matrixOps {
			c := perServerOp[srv][op]
			if c == nil {
				fmt.Fprint(sw, "\t-")
				continue
			}
			fmt.Fprintf(sw, "\t%d/%d", c.differ, c.total)
		}
		fmt.Fprintf(sw, "\t%d/%d\n", perServer[srv].differ, perServer[srv].total)
	}
	sw.Flush()
	if len(reasonList) > 0 {
		fmt.Fprintln(&b, "\nwhy (direct → through Plexus):")
		for i, r := range reasonList {
			fmt.Fprintf(&b, "#%d %s\n", i+1, r)
		}
	}
	return b.String(), differ, total
}

// noBaseline reports whether a direct row never connected, or connected
// to nothing it could use.
func noBaseline(direct matrixResult) bool {
	// Connected, but neither a call nor a ping works: the client cannot
	// use the server directly either (go-sdk's SSE client in front of
	// mcp-go's SSE server: "client is closing: EOF").
	broken := strings.HasPrefix(direct.obs["call"], "error: ") && strings.HasPrefix(direct.obs["ping"], "error: ")
	return strings.HasPrefix(direct.obs["lists"], "connect: ") || broken
}

// difference says how got differs from want, short: both whole when they
// are short, else the first place they part, with some context.
func difference(want, got string) string {
	const short = 90
	if len(want) <= short && len(got) <= short {
		return fmt.Sprintf("%q → %q", want, got)
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-30)
	for from > 0 && !utf8.RuneStart(want[from]) {
		from--
	}
	cut := func(s string) string {
		if from >= len(s) {
			return "(end)"
		}
		end := min(len(s), i+60)
		return s[from:end]
	}
	return fmt.Sprintf("at %d: …%q → …%q", i, cut(want), cut(got))
}

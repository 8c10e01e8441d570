package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// stallSink blocks every write until released: a database or disk that
// stopped answering.
type stallSink struct{ release chan struct{} }

func (s stallSink) Write(ctx context.Context, recs []Record) error {
	<-s.release
	return nil
}

// TestRecordNeverBlocks: with the writer stuck (a sink that does not
// answer, as a slow disk would keep it), Record returns at once, drops
// what the queue cannot hold and counts it; once the writer moves again
// the file says how many records were lost.
func TestRecordNeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink := stallSink{make(chan struct{})}
	l, err := Open(Options{Path: path, Queue: 8, Sinks: []Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 10000 {
		l.Record(t.Context(), Record{Kind: KindToolCall, Server: "s", Tool: "t", Outcome: "ok"})
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("10000 records with the writer stuck took %s", d)
	}
	if l.Dropped() == 0 {
		t.Error("nothing dropped though the queue holds 8")
	}
	close(sink.release)
	waitFor(t, func() bool { return len(l.q) == 0 })
	l.Record(t.Context(), Record{Kind: KindToolCall, Server: "s", Tool: "after", Outcome: "ok"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, path, 5)
	var gap, after bool
	for _, r := range recs {
		gap = gap || (r.Kind == KindAudit && r.Outcome == "dropped" && strings.Contains(r.Reason, "records lost"))
		after = after || r.Tool == "after"
	}
	if !gap || !after {
		t.Errorf("the file does not say records were lost (%v) or lacks the record after (%v): %d records", gap, after, len(recs))
	}
}

// TestFailingDiskLosesRecordsNotCalls: a file that refuses writes (a full
// or failing disk) fails no Record; the lost records are reported once
// the disk takes writes again, and the file holds no torn line.
func TestFailingDiskLosesRecordsNotCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(t.Context(), Record{Kind: KindToolCall, Tool: "before", Outcome: "ok"})
	waitFor(t, func() bool { return len(readAll(t, path, 5)) == 1 })
	// Swap the file for one opened read-only: every write fails.
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	good := l.file.f
	l.file.f = ro // the writer reads it after the next Record
	for range 20 {
		l.Record(t.Context(), Record{Kind: KindToolCall, Tool: "lost", Outcome: "ok"})
	}
	waitFor(t, func() bool { return l.Dropped() == 20 })
	l.file.f = good
	ro.Close()
	l.Record(t.Context(), Record{Kind: KindToolCall, Tool: "after", Outcome: "ok"})
	l.Close()
	recs := readAll(t, path, 5)
	if len(recs) != 3 || recs[0].Tool != "before" || recs[1].Outcome != "dropped" || !strings.HasPrefix(recs[1].Reason, "20 ") || recs[2].Tool != "after" {
		t.Errorf("records after a failing disk: %+v", recs)
	}
}

// TestRotationUnderLoad: concurrent writers, a small bound: the files
// never pass their size or count, every line is whole, the newest
// records are kept, and each file is 0600.
func TestRotationUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	const maxBytes, maxFiles = 8 << 10, 3
	l, err := Open(Options{Path: path, MaxFileBytes: maxBytes, MaxFiles: maxFiles, Queue: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	n := 400
	if testing.Short() {
		n = 100
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range n {
				l.Record(t.Context(), Record{Kind: KindToolCall, Server: "s", Tool: "t", Outcome: "ok", Seq: uint64(g*n + i)})
			}
		})
	}
	wg.Wait()
	l.Record(t.Context(), Record{Kind: KindToolCall, Tool: "last", Outcome: "ok"})
	l.Close()
	if l.Dropped() != 0 {
		t.Errorf("%d records dropped with a queue large enough", l.Dropped())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != maxFiles {
		t.Errorf("%d files, want %d", len(entries), maxFiles)
	}
	for _, e := range entries {
		fi, _ := e.Info()
		if fi.Size() > maxBytes {
			t.Errorf("%s is %d bytes, bound %d", e.Name(), fi.Size(), maxBytes)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", e.Name(), fi.Mode().Perm())
		}
		f, _ := os.Open(filepath.Join(dir, e.Name()))
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("%s: torn line %q", e.Name(), sc.Text())
			}
		}
		f.Close()
	}
	recs := readAll(t, path, maxFiles)
	if len(recs) == 0 || recs[len(recs)-1].Tool != "last" {
		t.Error("the newest record is not last in the log")
	}
}

// TestRecordFillsWho: the member comes from the caller, the client from
// WithClient.
func TestRecordFillsWho(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(Options{Path: path, Replica: "r1"})
	ctx := caller.With(context.Background(), caller.Identity{User: "ann@example.com"})
	ctx = WithClient(ctx, Client{Name: "claude-code", Version: "2.1", Profile: "dev", Session: "s1"})
	l.Record(ctx, Record{Kind: KindToolCall, Outcome: "ok"})
	l.Close()
	recs := readAll(t, path, 5)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Member != "ann@example.com" || r.Client != "claude-code" || r.ClientVersion != "2.1" || r.Profile != "dev" || r.Session != "s1" || r.Replica != "r1" {
		t.Errorf("who: %+v", r)
	}
}

// TestPayloadRedacted: arguments and results, when recorded, lose the
// server's secrets and the values of secret-named members.
func TestPayloadRedacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(Options{Path: path})
	const secret, keyed = "CANARY-server-secret-77", "CANARY-keyed-88"
	redact := strings.NewReplacer(secret, Redacted).Replace
	args := json.RawMessage(`{"q":"find ` + secret + `","api_key":"` + keyed + `","nested":[{"Password":"` + keyed + `"}],"n":1.50}`)
	res := json.RawMessage(`{"content":[{"type":"text","text":"` + secret + `"}]}`)
	l.RecordPayload(t.Context(), Record{Kind: KindToolCall, Outcome: "ok", Arguments: args, Result: res}, redact)
	l.Close()
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "CANARY") {
		t.Errorf("a secret reached the log: %s", b)
	}
	if !strings.Contains(string(b), `"q":"find [redacted]"`) || !strings.Contains(string(b), `"n":1.50`) {
		t.Errorf("the arguments are not kept around the secret: %s", b)
	}
}

func readAll(t *testing.T, path string, maxFiles int) []Record {
	t.Helper()
	var recs []Record
	if err := Read(path, maxFiles, Filter{}, func(r Record) bool { recs = append(recs, r); return true }); err != nil {
		t.Fatal(err)
	}
	return recs
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestApplyFollowsTheSettings: a log opened off records nothing and makes
// no file; turned on it records, within the bounds Apply gave; turned off
// again it records nothing more, without a restart.
func TestApplyFollowsTheSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(Options{Path: path, Off: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec := func(tool string) {
		l.Record(t.Context(), Record{Kind: KindToolCall, Server: "s", Tool: tool, Outcome: "ok"})
	}
	rec("while-off")
	time.Sleep(20 * time.Millisecond)
	if _, err := os.Stat(path); !os.IsNotExist(err) || l.On() {
		t.Fatalf("a log opened off: on %v, file %v", l.On(), err)
	}
	l.Apply(true, 4096, 2)
	for i := range 100 {
		rec("on-" + strings.Repeat("x", i))
	}
	waitFor(t, func() bool { return len(l.q) == 0 })
	l.Apply(false, 4096, 2)
	rec("off-again")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, r := range readAll(t, path, 2) {
		tools = append(tools, r.Tool)
	}
	got := strings.Join(tools, " ")
	if strings.Contains(got, "while-off") || strings.Contains(got, "off-again") || !strings.Contains(got, "on-x") {
		t.Errorf("records: %.200s", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() > 4096 {
		t.Errorf("the live file after Apply's 4096-byte bound: %v %v", fi, err)
	}
	if _, err := os.Stat(path + ".2"); !os.IsNotExist(err) {
		t.Errorf("Apply's bound of 2 files kept a third: %v", err)
	}
}

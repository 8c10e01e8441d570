package audit

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueue is how many records wait for the writer before Record
// drops them.
const DefaultQueue = 4096

// maxBatch bounds the records the writer takes from the queue at once.
const maxBatch = 256

// linger is the least time between two of the writer's batches: a record
// that comes sooner after a batch waits out the rest of it, so that under
// load the records of many calls share one write and one wake-up of the
// writer instead of costing each call both (a write(2) and a scheduler
// wake-up a call were 4 – 10 % of the daemon's CPU at 16 callers). A
// record after a quiet spell is written at once.
const linger = 20 * time.Millisecond

// Options configure a Log.
type Options struct {
	// Path is the live file, $PLEXUS_HOME/audit.jsonl.
	Path string
	// MaxFileBytes and MaxFiles bound the files (file.go); 0 is the
	// default.
	MaxFileBytes int64
	MaxFiles     int
	// Queue bounds the records waiting for the writer; 0 is DefaultQueue.
	Queue int
	// Replica names this daemon in a team ("" on one machine).
	Replica string
	// Chain, if set, signs each record into the replica's chain (chain.go).
	Chain *Chain
	// Sinks take every batch the file took (the team's database, OTLP).
	Sinks  []Sink
	Logger *slog.Logger
	// Off opens the log off (Apply): it records nothing, and opens no
	// file until it is turned on and has a record to write.
	Off bool
}

// Sink is a destination of records beside the file. Write is called from
// the writer goroutine only, with records in order.
type Sink interface {
	Write(ctx context.Context, recs []Record) error
}

// queued is a record waiting for the writer, with the redactor of its
// payload.
type queued struct {
	r      Record
	redact func(string) string
}

// Log is the audit log. A nil *Log records nothing.
type Log struct {
	opts Options
	log  *slog.Logger
	q    chan queued
	stop chan struct{}
	done chan struct{}
	file *file

	closed  atomic.Bool
	off     atomic.Bool            // Apply's switch: Record records nothing
	bounds  atomic.Pointer[bounds] // bounds Apply set, for the writer to take
	files   atomic.Int64           // how many files it keeps, for readers (the writer's is file.maxFiles)
	dropped atomic.Uint64          // records Record could not queue
	failed  atomic.Uint64          // records the file could not take

	subMu sync.Mutex
	subs  map[chan Record]struct{}
}

// Open opens (or creates, 0600) the log's file and starts its writer.
func Open(opts Options) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	f, err := openFile(opts.Path, opts.MaxFileBytes, opts.MaxFiles, !opts.Off)
	if err != nil {
		return nil, err
	}
	l := &Log{opts: opts, log: opts.Logger, q: make(chan queued, opts.Queue), stop: make(chan struct{}), done: make(chan struct{}),
		file: f, subs: map[chan Record]struct{}{}}
	l.off.Store(opts.Off)
	l.files.Store(int64(f.maxFiles))
	go l.write()
	return l, nil
}

// bounds are a file's bounds (file.go); 0 is the default.
type bounds struct {
	maxFileBytes int64
	maxFiles     int
}

// Apply turns the log on or off and sets its file's bounds (0: the
// defaults), as the settings say whenever they change (mcp.audit): off,
// Record records nothing from now on (what is queued is still written);
// the bounds hold from the next batch written. It never blocks.
func (l *Log) Apply(on bool, maxFileBytes int64, maxFiles int) {
	if l == nil {
		return
	}
	l.bounds.Store(&bounds{maxFileBytes, maxFiles})
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	// Readers may read one file too many or too few until the writer
	// rotates within the new bound: both are files of the log.
	l.files.Store(int64(max(maxFiles, int(l.files.Load()))))
	l.off.Store(!on)
}

// On reports whether the log records (false for nil).
func (l *Log) On() bool { return l != nil && !l.off.Load() && !l.closed.Load() }

// Path is the live file's path.
func (l *Log) Path() string { return l.opts.Path }

// MaxFiles is how many files the log keeps.
func (l *Log) MaxFiles() int { return int(l.files.Load()) }

// Record queues r, stamped with the time and filled with who ctx names
// (the caller's member, WithClient's client). It never blocks: when the
// queue is full the record is dropped and counted, and the next batch
// written says how many were lost.
func (l *Log) Record(ctx context.Context, r Record) { l.RecordPayload(ctx, r, nil) }

// RecordPayload is Record for a record with Arguments or Result (a server
// whose settings ask for them): they are redacted by the writer, off the
// call's path, through redact (the server's secrets) and by the names of
// their members (redact.go). Their bytes must not change after the call.
func (l *Log) RecordPayload(ctx context.Context, r Record, redact func(string) string) {
	if !l.On() {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	who(ctx, &r)
	select {
	case l.q <- queued{r, redact}:
	default:
		l.dropped.Add(1)
	}
}

// Dropped is how many records were lost: the queue was full, or the file
// could not take them.
func (l *Log) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load() + l.failed.Load()
}

// Close writes what is queued and stops the writer.
func (l *Log) Close() error {
	if l == nil || l.closed.Swap(true) {
		return nil
	}
	close(l.stop)
	<-l.done
	l.subMu.Lock()
	for ch := range l.subs {
		close(ch)
	}
	l.subs = nil
	l.subMu.Unlock()
	return l.file.close()
}

// write is the writer: it takes batches off the queue until Close, then
// what is left.
func (l *Log) write() {
	defer close(l.done)
	batch := make([]queued, 0, maxBatch)
	var buf []byte
	var lost uint64    // dropped records already reported
	var last time.Time // the last batch's end
	for {
		batch = batch[:0]
		select {
		case r := <-l.q:
			batch = append(batch, r)
		case <-l.stop:
			for {
				batch = batch[:0]
				batch = l.drain(batch)
				if len(batch) == 0 {
					return
				}
				buf, lost = l.flush(batch, buf, lost)
			}
		}
		if wait := linger - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.stop: // Close writes what is queued at once
				t.Stop()
			}
		}
		// What came while waiting, in batches of at most maxBatch.
		for {
			batch = l.drain(batch)
			buf, lost = l.flush(batch, buf, lost)
			if len(l.q) == 0 {
				break
			}
			batch = batch[:0]
		}
		last = time.Now()
	}
}

// drain adds what waits in the queue to batch, up to maxBatch.
func (l *Log) drain(batch []queued) []queued {
	for len(batch) < maxBatch {
		select {
		case r := <-l.q:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// flush writes one batch: to the file, to the sinks, to followers. Lost
// records since the last batch are written first, as a record of their
// own.
func (l *Log) flush(queue []queued, buf []byte, lost uint64) ([]byte, uint64) {
	records := len(queue) // the gap record is not one to count as lost
	batch := make([]Record, 0, len(queue)+1)
	n := l.Dropped()
	if n > lost {
		batch = append(batch, Record{Time: time.Now(), Kind: KindAudit, Outcome: "dropped",
			Reason: strconv.FormatUint(n-lost, 10) + " records lost: the queue was full or the disk failed"})
	}
	for _, q := range queue {
		if q.r.Arguments != nil || q.r.Result != nil {
			q.r.redactPayload(q.redact)
		}
		batch = append(batch, q.r)
	}
	buf = buf[:0]
	for i := range batch {
		batch[i].Replica = l.opts.Replica
		if l.opts.Chain != nil {
			l.opts.Chain.Sign(&batch[i])
		}
		n := len(buf)
		var err error
		if buf, err = appendRecord(buf, &batch[i]); err != nil {
			buf = buf[:n]
			continue
		}
		buf = append(buf, '\n')
	}
	if b := l.bounds.Swap(nil); b != nil {
		l.file.bound(b.maxFileBytes, b.maxFiles)
	}
	if err := l.file.write(buf); err != nil {
		l.failed.Add(uint64(records))
		l.log.Warn("audit records lost", "records", records, "err", err)
	} else {
		lost = n // reported
	}
	for _, s := range l.opts.Sinks {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Write(ctx, batch); err != nil {
			l.log.Warn("audit records not sent", "records", len(batch), "err", err)
		}
		cancel()
	}
	l.publish(batch)
	return buf, lost
}

// KindAudit is a record of the log's own: records lost.
const KindAudit = "audit"

// Follow returns a channel of the records written from now on, and the
// function that ends it. A follower that falls behind misses records
// rather than slowing the writer.
func (l *Log) Follow() (<-chan Record, func()) {
	ch := make(chan Record, 256)
	l.subMu.Lock()
	if l.subs == nil {
		l.subMu.Unlock()
		close(ch)
		return ch, func() {}
	}
	l.subs[ch] = struct{}{}
	l.subMu.Unlock()
	return ch, func() {
		l.subMu.Lock()
		if _, ok := l.subs[ch]; ok {
			delete(l.subs, ch)
			close(ch)
		}
		l.subMu.Unlock()
	}
}

func (l *Log) publish(batch []Record) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	for ch := range l.subs {
		for _, r := range batch {
			select {
			case ch <- r:
			default:
			}
		}
	}
}

// Shared is a sink that also reads back the records of every replica (the
// team's database): Team and VerifyTeam read through it.
type Shared interface {
	Sink
	// Records returns the newest n records written at or after since,
	// oldest first, as the replicas wrote them.
	Records(ctx context.Context, since time.Time, n int) ([]Record, error)
}

// Team returns the newest n records of every replica that pass f, oldest
// first, from the shared sink; nil without one. Problems lists what
// Verify found wrong with the chains of what it read: a record forged,
// altered or erased by someone without the team's key.
func (l *Log) Team(ctx context.Context, f Filter, n int) (recs []Record, problems []string, err error) {
	if l == nil {
		return nil, nil, nil
	}
	var shared Shared
	for _, s := range l.opts.Sinks {
		if sh, ok := s.(Shared); ok {
			shared = sh
		}
	}
	if shared == nil {
		return nil, nil, nil
	}
	if n <= 0 {
		n = DefaultLast
	}
	// The chains are verified over all that was read, then filtered.
	all, err := shared.Records(ctx, f.Since, maxTeamRead)
	if err != nil {
		return nil, nil, err
	}
	if l.opts.Chain != nil {
		// Every chain is whole from its first record, unless what was
		// read is cut: by time, or by the bound on reading (the store's
		// own pruning keeps more than that).
		problems = Verify(l.opts.Chain.Keys(), all, !f.Since.IsZero() || len(all) == maxTeamRead)
	}
	for _, r := range all {
		if f.Match(r) {
			recs = append(recs, r)
		}
	}
	if len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	return recs, problems, nil
}

// maxTeamRead bounds the records Team reads from the shared sink.
const maxTeamRead = 100_000

package host

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestAnswersOrderedWithEvents: a status read from the host says which
// events it is as new as (EventSeq), so that a client reading answers and
// events on two connections can tell which is newer. After an add, the
// answer is as new as the events of the add ("starting" while the first
// tools are pinned, then "ready"); a later change is announced with a
// higher Seq, and a list read after it is as new as that event, also when
// the change removed the last server.
func TestAnswersOrderedWithEvents(t *testing.T) {
	th := newTestHost(t)
	events, stop := th.Subscribe()
	defer stop()

	th.create("one", th.example(nil))
	answer := th.status("one")
	if answer.State != apitype.StateReady {
		t.Fatalf("after the add: %s", answer.State)
	}
	seen := drain(events)
	var added []apitype.Event
	for _, ev := range seen {
		if ev.Type == apitype.EventServer && ev.Server == "one" {
			added = append(added, ev)
		}
	}
	if len(added) == 0 {
		t.Fatal("the add announced nothing")
	}
	for _, ev := range added {
		if ev.Status.EventSeq != ev.Seq {
			t.Errorf("event %d carries a status as of event %d", ev.Seq, ev.Status.EventSeq)
		}
		if ev.Seq > answer.EventSeq {
			t.Errorf("event %d (%s) is announced as newer than the answer read after it (as of %d)", ev.Seq, ev.Status.State, answer.EventSeq)
		}
	}

	if err := th.Restart(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	restarted := drain(events)
	if len(restarted) == 0 || restarted[0].Seq <= answer.EventSeq {
		t.Fatalf("the restart's events %v are not newer than the answer as of %d", restarted, answer.EventSeq)
	}
	if l := th.ServerList(); l.EventSeq < restarted[len(restarted)-1].Seq || l.Servers[0].EventSeq != l.EventSeq {
		t.Fatalf("a list read after event %d is as of %d (its status: %d)", restarted[len(restarted)-1].Seq, l.EventSeq, l.Servers[0].EventSeq)
	}

	if _, err := th.DeleteServer("one", 0); err != nil {
		t.Fatal(err)
	}
	var removed int64
	for _, ev := range drain(events) {
		if ev.Type == apitype.EventServerRemoved {
			removed = ev.Seq
		}
	}
	if removed == 0 {
		t.Fatal("the removal was not announced")
	}
	if l := th.ServerList(); len(l.Servers) != 0 || l.EventSeq < removed {
		t.Fatalf("the empty list read after the removal (event %d) is as of %d", removed, l.EventSeq)
	}
}

// drain returns the events ch holds now.
func drain(ch <-chan apitype.Event) []apitype.Event {
	var out []apitype.Event
	for {
		select {
		case ev := <-ch:
			out = append(out, ev)
		default:
			return out
		}
	}
}

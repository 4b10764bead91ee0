package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
)

// TestLiveViewFollowsHeldCallsToTheirOutcome: from the events alone, the
// view tells what became of each answered call (approved and ran,
// approved and then refused by the gate, denied, nobody answering,
// approved and not finished yet), keeps a session whose client ended it
// as ended with why, and lists sessions oldest first.
func TestLiveViewFollowsHeldCallsToTheirOutcome(t *testing.T) {
	t.Parallel()
	v := newLiveView()
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	seq := uint64(0)
	publish := func(e events.Event) {
		seq++
		e.Seq, e.Time = seq, t0.Add(time.Duration(seq)*time.Second)
		v.take(e)
	}
	publish(events.Event{Type: events.SessionOpened, Session: "s1", Agent: "alice", Tool: "t"})
	publish(events.Event{Type: events.SessionOpened, Session: "s2", Agent: "bob", Tool: "t"})
	ask := func(id string) {
		publish(events.Event{Type: events.ApprovalAsked, Session: "s1", Approval: id,
			Detail: approval.Request{ID: id, Session: "s1", Tool: "t.submit_form", Command: "submit_form", Args: map[string]any{"text": "<PW>"}}})
	}
	answer := func(id string, ok bool, channel string) {
		publish(events.Event{Type: events.ApprovalAnswered, Session: "s1", Approval: id, Allowed: events.Bool(ok), Channel: channel, By: "olga"})
	}
	decide := func(id string, ok bool, stage, reason string) {
		publish(events.Event{Type: events.Decision, Session: "s1", Approval: id, Allowed: events.Bool(ok), Stage: stage, Reason: reason})
	}
	ask("ran")
	answer("ran", true, approval.ChannelConsole)
	decide("ran", true, "gate", "")
	ask("refused")
	answer("refused", true, approval.ChannelConsole)
	decide("refused", false, "scope", "the form now leads elsewhere")
	ask("denied")
	answer("denied", false, approval.ChannelOperator)
	decide("denied", false, "approval", "denied")
	ask("timeout")
	publish(events.Event{Type: events.ApprovalAnswered, Session: "s1", Approval: "timeout", Allowed: events.Bool(false), Channel: approval.ChannelTimeout})
	ask("running")
	answer("running", true, approval.ChannelConsole)
	ask("unanswered")
	publish(events.Event{Type: events.SessionEnded, Session: "s2", Reason: "the MCP client ended its session"})

	got := map[string]liveAnswer{}
	for _, a := range v.answered() {
		got[a.Request.ID] = a
	}
	for id, want := range map[string]struct{ answer, then, class string }{
		"ran":     {"Approved by olga (console).", "Then the call ran: allowed.", "ran"},
		"refused": {"Approved by olga (console).", "Then the call was refused at scope: the form now leads elsewhere", "refused"},
		"denied":  {"Denied by olga (operator): the call was refused.", "", ""},
		"timeout": {"Nobody answered before the deadline: the call was refused.", "", ""},
		"running": {"Approved by olga (console).", "The call has not finished yet.", "waiting"},
	} {
		a, ok := got[id]
		if !ok {
			t.Errorf("%s: not among the answered calls", id)
			continue
		}
		if a.Answer() != want.answer || a.ThenText() != want.then || a.ThenClass() != want.class {
			t.Errorf("%s: %q / %q (%s), want %q / %q (%s)", id, a.Answer(), a.ThenText(), a.ThenClass(), want.answer, want.then, want.class)
		}
		if a.Request.Args["text"] != "<PW>" {
			t.Errorf("%s: the request's arguments were not kept: %v", id, a.Request.Args)
		}
	}
	if _, ok := got["unanswered"]; ok {
		t.Error("a call still waiting is listed as answered")
	}
	if first := v.answered()[0].Request.ID; first != "running" {
		t.Errorf("the last answered call first: got %s first", first)
	}

	list := v.list()
	if len(list) != 2 || list[0].ID != "s1" || list[1].ID != "s2" {
		t.Fatalf("sessions: %+v, want s1 then s2", list)
	}
	if !list[0].Ended.IsZero() || list[1].Ended.IsZero() || list[1].EndedWhy != "the MCP client ended its session" {
		t.Errorf("s1 open and s2 ended by its client: %+v", list)
	}
	if strings.HasPrefix(list[0].VersionText(), "ended") || !strings.HasPrefix(list[1].VersionText(), "ended") {
		t.Errorf("versions: %s %s", list[0].VersionText(), list[1].VersionText())
	}
}

// TestLiveViewCaughtUp: caughtUp returns once the view has taken the event
// asked for, and (its bound passed) when it never comes.
func TestLiveViewCaughtUp(t *testing.T) {
	t.Parallel()
	v := newLiveView()
	done := make(chan struct{})
	go func() { v.caughtUp(2, time.Minute); close(done) }()
	v.take(events.Event{Seq: 1, Type: events.SessionOpened, Session: "a"})
	select {
	case <-done:
		t.Fatal("caughtUp returned before event 2 was taken")
	default:
	}
	v.take(events.Event{Seq: 2, Type: events.SessionOpened, Session: "b"})
	<-done
	v.caughtUp(99, time.Millisecond) // returns: its bound passes
}

// TestLiveViewKeepsEndedSessionsBounded: ended sessions are kept, the
// oldest dropped beyond liveEnded; open ones are never dropped.
func TestLiveViewKeepsEndedSessionsBounded(t *testing.T) {
	t.Parallel()
	v := newLiveView()
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	v.take(events.Event{Seq: 1, Time: t0, Type: events.SessionOpened, Session: "kept-open"})
	for i := range liveEnded + 5 {
		id := "ended-" + string(rune('A'+i%26)) + strings.Repeat("x", i/26)
		at := t0.Add(time.Duration(i+1) * time.Second)
		v.take(events.Event{Seq: uint64(2 * (i + 1)), Time: at, Type: events.SessionOpened, Session: id})
		v.take(events.Event{Seq: uint64(2*(i+1) + 1), Time: at, Type: events.SessionEnded, Session: id})
	}
	list := v.list()
	if len(list) != liveEnded+1 || list[0].ID != "kept-open" {
		t.Errorf("%d sessions kept (first %s), want the open one and the last %d ended", len(list), list[0].ID, liveEnded)
	}
}

// TestLiveViewSaysWhenItMissedEvents: a view whose watch is dropped for
// falling behind follows again, and the index says that it missed
// events and what it shows may be incomplete; a view that missed
// nothing says nothing of the kind.
func TestLiveViewSaysWhenItMissedEvents(t *testing.T) {
	t.Parallel()
	hub := events.NewHub(1)
	v := newLiveView()
	go v.follow(hub)
	for hub.Watchers() == 0 {
		time.Sleep(time.Millisecond)
	}
	page := func() string {
		var b strings.Builder
		if err := consolePages.ExecuteTemplate(&b, "index.html", map[string]any{"Base": "/console/s/k", "Sessions": v.list(), "Answered": v.answered(), "Missed": v.missedAt()}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if p := page(); strings.Contains(p, "missed some") {
		t.Errorf("a view that missed nothing says it did:\n%s", p)
	}
	// The view cannot take an event while its lock is held: its watch's
	// buffer (one event) fills and the hub drops it.
	v.mu.Lock()
	for i := range 5 {
		hub.Publish(events.Event{Type: events.SessionOpened, Session: "s" + string(rune('0'+i)), Tool: "t"})
	}
	v.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); v.missedAt().IsZero(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the view's watch was dropped, and the view does not say it missed events")
		}
	}
	if p := page(); !strings.Contains(p, "The console fell behind the daemon's events") || !strings.Contains(p, "may be incomplete") {
		t.Errorf("a view that missed events does not say so:\n%s", p)
	}
	// It follows again: a later event is taken.
	hub.Publish(events.Event{Type: events.SessionOpened, Session: "later", Tool: "t"})
	v.caughtUp(hub.Seq(), time.Minute)
	if l := v.list(); len(l) == 0 || l[len(l)-1].ID != "later" {
		t.Errorf("after the drop, the view did not take a later event: %+v", l)
	}
}

// TestIndexShowsWhenAnAnsweredCallWasAsked: an answered call whose
// question the view never saw (its approval_asked came before the view
// followed) does not say it was asked at an empty time.
func TestIndexShowsWhenAnAnsweredCallWasAsked(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	render := func(a liveAnswer) string {
		var b strings.Builder
		if err := consolePages.ExecuteTemplate(&b, "index.html", map[string]any{"Base": "/console/s/k", "Answered": []liveAnswer{a}, "Missed": time.Time{}}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if p := render(liveAnswer{Request: approval.Request{ID: "a1"}, Answered: at}); strings.Contains(p, "asked") {
		t.Errorf("an answer whose question was not seen says when it was asked:\n%s", p)
	}
	if p := render(liveAnswer{Request: approval.Request{ID: "a1", Created: at.Add(-time.Minute)}, Answered: at}); !strings.Contains(p, "asked 2026-11-28 09:59:00Z, answered") {
		t.Errorf("an answer whose question was seen does not say when it was asked:\n%s", p)
	}
}

package approval_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
)

func TestDecideReleasesTheWaiter(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{Tool: "demo.submit_form", Why: []string{"policy x"}}, time.Minute)
	if l := b.List(); len(l) != 1 || l[0].ID != p.ID || l[0].Deadline.Sub(l[0].Created) != time.Minute {
		t.Fatalf("List = %+v", l)
	}
	go b.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelOperator, By: "alice"})
	o := p.Wait(context.Background())
	if !o.Approved || o.Channel != approval.ChannelOperator || o.By != "alice" || o.At.IsZero() {
		t.Fatalf("outcome %+v", o)
	}
	if l := b.List(); len(l) != 0 {
		t.Errorf("still listed after the decision: %+v", l)
	}
	if b.Get(p.ID) != nil {
		t.Error("Get finds a call that has been waited for")
	}
	if err := b.Decide(p.ID, approval.Outcome{Approved: true}); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("second decision: %v, want ErrUnknown", err)
	}
}

func TestFirstAnswerWins(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{}, time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.Decide(p.ID, approval.Outcome{Approved: i%2 == 0, Channel: approval.ChannelOperator})
		}()
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, approval.ErrUnknown) {
			t.Error(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions were taken, want exactly 1", won)
	}
	p.Wait(context.Background())
}

func TestNoAnswerDenies(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{}, 20*time.Millisecond)
	o := p.Wait(context.Background())
	if o.Approved || o.Channel != approval.ChannelTimeout {
		t.Fatalf("outcome %+v, want a timeout denial", o)
	}
	if err := b.Decide(p.ID, approval.Outcome{Approved: true}); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("approving an expired call: %v, want ErrUnknown", err)
	}
}

func TestCancelledCallDenies(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{}, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if o := p.Wait(ctx); o.Approved || o.Channel != approval.ChannelCancelled {
		t.Fatalf("outcome %+v, want a cancelled denial", o)
	}
	if len(b.List()) != 0 {
		t.Error("a cancelled call is still listed")
	}
}

func TestIDsAreUnique(t *testing.T) {
	b := approval.NewBroker(nil)
	seen := map[string]bool{}
	for range 1000 {
		p := b.Open(approval.Request{}, time.Minute)
		if seen[p.ID] {
			t.Fatalf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
	}
}

// TestAnsweredBeforeWaiting: an answer given before anyone waits (the
// operator answered between two rounds of a multi round-trip call) is
// kept for the waiter, and the call is no longer listed.
func TestAnsweredBeforeWaiting(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{}, time.Minute)
	if err := b.Decide(p.ID, approval.Outcome{Approved: false, Channel: approval.ChannelOperator, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	if len(b.List()) != 0 {
		t.Error("an answered call is still listed")
	}
	got := b.Get(p.ID)
	if got != p {
		t.Fatalf("Get = %v, want the answered call", got)
	}
	if o := got.Wait(context.Background()); o.Approved || o.By != "bob" {
		t.Fatalf("outcome %+v", o)
	}
}

// TestAbandonedCallIsDropped: a held call nobody waits for disappears at
// its deadline.
func TestAbandonedCallIsDropped(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{}, 30*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for b.Get(p.ID) != nil || len(b.List()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned call is still held after its deadline")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.Decide(p.ID, approval.Outcome{Approved: true}); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("approving an abandoned call: %v", err)
	}
}

// TestWithdraw: a withdrawn call can no longer be answered or found.
func TestWithdraw(t *testing.T) {
	b := approval.NewBroker(nil)
	p := b.Open(approval.Request{}, time.Minute)
	b.Withdraw(p.ID)
	if b.Get(p.ID) != nil || len(b.List()) != 0 {
		t.Error("a withdrawn call is still held")
	}
	if err := b.Decide(p.ID, approval.Outcome{Approved: true}); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("approving a withdrawn call: %v", err)
	}
}

// TestSummaryShowsWhatRuns: the line a human approves from shows the
// arguments, the page and where the call leads.
func TestSummaryShowsWhatRuns(t *testing.T) {
	r := approval.Request{Tool: "demo.execute_js", Args: map[string]any{"expression": "fetch('/transfer')"},
		Page: "https://bank.example/", URL: "https://bank.example/", Why: []string{"policy x"}}
	got := r.Summary()
	for _, want := range []string{`{"expression":"fetch('/transfer')"}`, "on https://bank.example/", "(policy x)"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	r.URL = "https://evil.example/post"
	if got := r.Summary(); !strings.Contains(got, "leading to https://evil.example/post") {
		t.Errorf("summary %q does not say where the call leads", got)
	}
}

package executor_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// TestCallHeldForApprovalGivesBackItsTurn: with one call at a time
// (CallsAtOnce 1), a call held for a human's approval does not hold its
// place while it waits: another session's call runs meanwhile, and the
// approved call takes a place again and acts.
func TestCallHeldForApprovalGivesBackItsTurn(t *testing.T) {
	t.Parallel()
	h, broker := newApprovalHarness(t, executor.Config{CallsAtOnce: 1, CallWait: 5 * time.Second})
	ex := h.ex
	var clicks atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>page</title><button id=b onclick="fetch('/clicked')">Pay</button>`)
	})
	mux.HandleFunc("/clicked", func(w http.ResponseWriter, r *http.Request) { clicks.Add(1) })
	site := executor.ServeOn(t, "127.0.0.1:0", mux)
	for _, s := range []string{"held", "other"} {
		if r := h.call(t, s, "navigate", map[string]any{"url": site + "/page"}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	// As the click is about to be held, the other session's call runs: it
	// would wait past CallWait, and be refused, if the held call kept its
	// place.
	var other *toolclad.Reply
	ex.SetBeforeApproval(func(string) {
		other = h.call(t, "other", "snapshot", nil)
		go func() {
			for {
				for _, p := range broker.List() {
					broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelOperator, By: "olga"})
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	})
	r := h.call(t, "held", "click", map[string]any{"selector": "#b"})
	if other == nil || other.IsError || !strings.Contains(other.Text, "Pay") {
		t.Errorf("the other session's call while a click waited for approval: %+v", other)
	}
	if r.IsError {
		t.Fatalf("the approved click: %s", r.Text)
	}
	deadline := time.Now().Add(30 * time.Second)
	for clicks.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := clicks.Load(); n != 1 {
		t.Errorf("the approved click reached the page %d times, want 1", n)
	}
}

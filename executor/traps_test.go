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
)

// These pages try to make the gate judge one action while the browser
// does another: where a click or a submit leads is worked out as the
// browser works it out, and checked again right before acting.

// postCounter serves page at /page and counts POSTs to /posted.
func postCounter(t *testing.T, page string) (string, *atomic.Int64) {
	t.Helper()
	var posts atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/posted", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		fmt.Fprint(w, "<title>posted</title>posted")
	})
	return executor.ServeOn(t, "127.0.0.1:0", mux), &posts
}

// TestClicksThatSubmitAreSeen: a label for a submit button, and a submit
// button (of a form elsewhere, by its form attribute) inside a link, both
// submit a form when clicked. The gate sees the submission: with no
// submit_form declared, both clicks are refused and nothing is posted.
func TestClicksThatSubmitAreSeen(t *testing.T) {
	t.Parallel()
	noSubmit := strings.Replace(fmt.Sprintf(loopManifest, false, 50), "[browser.commands.submit_form]\n", "", 1)
	h := newHarnessFrom(t, noSubmit)
	site, posts := postCounter(t, `<form id=f method=post action="/posted"><input name=q value=x><input type=submit id=sub value=Send></form>
<label id=lbl for=sub>Read more</label>
<a id=lnk href="/page"><button id=btn type=submit form=f>Next page</button></a>`)
	for _, sel := range []string{"#lbl", "#btn"} {
		if r := h.call(t, "s", "navigate", map[string]any{"url": site + "/page"}); r.IsError {
			t.Fatal(r.Text)
		}
		r := h.call(t, "s", "click", map[string]any{"selector": sel})
		if !r.IsError || !strings.Contains(r.Text, "DENIED at manifest") || !strings.Contains(r.Text, "submit_form") {
			t.Errorf("click %s, which submits the form: %s", sel, r.Text)
		}
	}
	if n := posts.Load(); n != 0 {
		t.Fatalf("the form was posted %d time(s)", n)
	}
}

// TestSubmitFormPostsWhereJudged: submit_form on an image input with a
// formaction posts there (and is judged there); on an element inside a
// button it posts to the form's own action, out of scope, which is what
// the gate judges and refuses. The canary sees nothing.
func TestSubmitFormPostsWhereJudged(t *testing.T) {
	t.Parallel()
	h, canary := newHarnessWithCanary(t)
	site, posts := postCounter(t, `<form method=post action="`+h.canary+`/steal"><input type=image id=img formaction="/posted" alt=go>
<button formaction="/posted"><span id=inner>Go</span></button></form>`)
	h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
	if r := h.call(t, "s", "submit_form", map[string]any{"selector": "#inner"}); !r.IsError || !strings.Contains(r.Text, "DENIED at scope") {
		t.Errorf("submit_form on a span inside a button (the form posts to the canary): %s", r.Text)
	}
	h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
	if r := h.call(t, "s", "submit_form", map[string]any{"selector": "#img"}); r.IsError || !strings.Contains(r.Text, "/posted") {
		t.Errorf("submit_form on an image input with formaction /posted: %s", r.Text)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("posts to /posted: %d, want 1", n)
	}
	if n := canary.Hits(); n != 0 {
		t.Fatalf("the canary saw %d request(s)", n)
	}
}

// TestElementChangedAfterTheDecision: the page turns a harmless button
// into a submit button after the gate judged the click — when the mouse
// moves over it, or when the button goes down. The click checks again
// before each mouse event and refuses; nothing is posted.
func TestElementChangedAfterTheDecision(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	site, posts := postCounter(t, `<form method=post action="/posted"><input name=q value=x>
<button id=over type=button onmouseover="this.type='submit'" style="width:200px;height:80px">Details</button>
<button id=down type=button onmousedown="this.type='submit'" style="width:200px;height:80px">More</button></form>`)
	for _, sel := range []string{"#over", "#down"} {
		h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
		r := h.call(t, "s", "click", map[string]any{"selector": sel})
		if !r.IsError || !strings.Contains(r.Text, "changed after the gate decided") {
			t.Errorf("click %s, which becomes a submit button under the mouse: %s", sel, r.Text)
		}
	}
	if n := posts.Load(); n != 0 {
		t.Fatalf("a click judged as not submitting posted the form %d time(s)", n)
	}
}

// TestApprovalForAClickDoesNotCoverASubmit: a human approves a click on a
// plain button; while the call is held the page makes it a submit button.
// The call now submits a form, which is not what was approved: refused,
// nothing posted.
func TestApprovalForAClickDoesNotCoverASubmit(t *testing.T) {
	t.Parallel()
	h, broker := newApprovalHarness(t, executor.Config{})
	// The page makes the button a submit button a second after it loads:
	// while the human reads the question.
	// The form has no action: it posts to the page itself, so where the
	// click leads does not change, only that it submits. The page makes
	// the button a submit button when the test says so (/flip), while the
	// human reads the question.
	var flip, posts atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<form method=post><input name=amount value=1000>
<button id=b type=button>Show details</button></form>
<script>setInterval(async () => {
  if (await (await fetch('/flip')).text() === '1') document.getElementById('b').type = 'submit';
}, 50);</script>`)
	})
	mux.HandleFunc("/flip", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, flip.Load()) })
	site := executor.ServeOn(t, "127.0.0.1:0", mux)
	h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
	go func() {
		for range 1000 {
			if l := broker.List(); len(l) == 1 {
				flip.Store(1)
				time.Sleep(500 * time.Millisecond) // the page's poll sees it meanwhile
				broker.Decide(l[0].ID, approval.Outcome{Approved: true, Channel: approval.ChannelOperator, By: "test"})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	r := h.call(t, "s", "click", map[string]any{"selector": "#b"})
	if !r.IsError || !strings.Contains(r.Text, "call changed") {
		t.Errorf("the approved click, now a submit: %s", r.Text)
	}
	if n := posts.Load(); n != 0 {
		t.Fatalf("the form was posted %d time(s) under an approval for a plain click", n)
	}
}

// TestClicksThatLandElsewhereAreJudged: pages where the click lands on
// something inside the named element, or where the browser's default
// handling carries a click past the element that first sees it, or where
// the page's own mouseup handler makes a button submit. With no
// submit_form declared, none of them may post the form: each is refused
// before the click, at the click, or by the acting guard when the page
// posts on its own.
func TestClicksThatLandElsewhereAreJudged(t *testing.T) {
	t.Parallel()
	h := newHarnessFrom(t, strings.Replace(fmt.Sprintf(loopManifest, false, 500), "[browser.commands.submit_form]\n", "", 1))
	const form = `<form method=post action="/posted">`
	for _, tc := range []struct{ name, html, sel string }{
		{"div around a submit button", form + `<div id=c style="width:300px;height:80px"><button style="width:100%;height:100%">Go</button></div></form>`, "#c"},
		{"closed shadow root with a form", `<div id=h style="width:300px;height:80px"><template shadowrootmode=closed>` + form + `<button style="width:300px;height:80px">Go</button></form></template></div>`, "#h"},
		{"iframe with a form", `<iframe id=i style="width:300px;height:120px;border:0" srcdoc="<form method=post action='/posted' style='margin:0'><button style='width:300px;height:120px'>Go</button></form>"></iframe>`, "#i"},
		{"label without a control in a button", form + `<button><label id=l>Send</label></button></form>`, "#l"},
		{"summary in a button", form + `<button><summary id=s>Send</summary></button></form>`, "#s"},
		{"text input in a button", form + `<button><input id=t value=x></button></form>`, "#t"},
		{"label for a checkbox, in a button", form + `<input type=checkbox id=cb><button><label id=l for=cb>Send</label></button></form>`, "#l"},
		{"label for a text input in a button", form + `<button><input id=t></button></form><label id=l for=t>Name</label>`, "#l"},
		{"plain button in a submit button", form + `<button id=o></button></form><script>const b = document.createElement('button'); b.type = 'button'; b.id = 'in'; b.textContent = 'in'; o.append(b);</script>`, "#in"},
		{"mouseup makes it submit", form + `<button id=b type=button onmouseup="this.type='submit'">More</button></form>`, "#b"},
	} {
		site, posts := postCounter(t, tc.html)
		h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
		r := h.call(t, "s", "click", map[string]any{"selector": tc.sel})
		if n := posts.Load(); n != 0 {
			t.Errorf("%s: the form was posted %d time(s) (%s)", tc.name, n, r.Text)
		}
	}
}

// TestLinksInReachAreJudged: a click whose target holds a link, an SVG
// link, or a label whose control is inside a link may follow that link:
// it is judged (here: out of scope, refused before the click), never
// followed unseen.
func TestLinksInReachAreJudged(t *testing.T) {
	t.Parallel()
	h, canary := newHarnessWithCanary(t)
	out := h.canary + "/steal"
	for _, tc := range []struct{ name, html, sel string }{
		{"div around a link", `<div id=c style="width:300px;height:80px"><a href="` + out + `" style="display:block;height:100%">x</a></div>`, "#c"},
		{"SVG xlink:href", `<svg width=300 height=80><a xlink:href="` + out + `"><rect id=r width=300 height=80 /></a></svg>`, "#r"},
		{"SVG href", `<svg width=300 height=80><a href="` + out + `"><rect id=r width=300 height=80 /></a></svg>`, "#r"},
		{"label for an input in a link", `<a href="` + out + `"><input id=t></a><label id=l for=t>Name</label>`, "#l"},
	} {
		site, _ := postCounter(t, tc.html)
		h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
		if r := h.call(t, "s", "click", map[string]any{"selector": tc.sel}); !r.IsError || !strings.Contains(r.Text, "DENIED at scope") {
			t.Errorf("%s: %s", tc.name, r.Text)
		}
	}
	if n := canary.Hits(); n != 0 {
		t.Fatalf("the canary saw %d request(s)", n)
	}
}

// TestSubmitRetargetedBySubmitHandler: the page's submit handler moves the
// form's action after the gate judged it; the post to the new action is
// refused by the acting guard and the call refused.
func TestSubmitRetargetedBySubmitHandler(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	var elsewhere atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<form id=f method=post action="/posted" onsubmit="this.action='/elsewhere'"><button>Go</button></form>`)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) })
	site := executor.ServeOn(t, "127.0.0.1:0", mux)
	h.call(t, "s", "navigate", map[string]any{"url": site + "/page"})
	r := h.call(t, "s", "submit_form", map[string]any{"selector": "#f"})
	if !r.IsError || !strings.Contains(r.Text, "form posted elsewhere") {
		t.Errorf("submit_form on a form its handler retargets: %s", r.Text)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the form was posted to /elsewhere %d time(s)", n)
	}
}

package executor_test

import (
	"context"
	"fmt"
	"github.com/browsergate/browsergate/approval"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// These tests drive the executor directly, with real Chromium, real Cedar
// policies and a real bbolt file; only the clock is fake where time matters.

const loopManifest = `
[tool]
name = "loop"
[tool.evidence]
screenshots = %v
[browser]
startup_timeout_seconds = 30
max_interactions = %d
idle_timeout_seconds = 60
session_timeout_seconds = 100
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.screenshot]
[browser.commands.go_back]
[browser.commands.wait_for]
[browser.commands.extract_html]
[browser.commands.list_tabs]
[browser.commands.scroll]
[browser.commands.network_timing]
`

type harness struct {
	ex     *executor.Executor
	m      *toolclad.Manifest
	store  *evidence.Store
	clock  *testkit.Clock
	site   string
	canary string // base URL of the canary, when the harness has one
}

func newHarness(t *testing.T, maxInteractions int, screenshots bool) *harness {
	t.Helper()
	return newHarnessFrom(t, fmt.Sprintf(loopManifest, screenshots, maxInteractions))
}

// newApprovalHarness is a harness whose click needs a human's approval,
// with an approval broker; cfg sets more of the executor's configuration
// (its manifests, policies, evidence and approvals are the harness's).
func newApprovalHarness(t *testing.T, cfg executor.Config) (*harness, *approval.Broker) {
	t.Helper()
	m := testkit.Manifest(t, strings.Replace(fmt.Sprintf(loopManifest, false, 50), "[browser.commands.click]\n", "[browser.commands.click]\nhuman_approval = true\n", 1))
	cfg.Manifests, cfg.Policies, cfg.Evidence, cfg.Approvals = []*toolclad.Manifest{m}, testkit.Policies(t), testkit.Store(t), approval.NewBroker(nil)
	ex, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	return &harness{ex: ex, m: m, store: cfg.Evidence}, cfg.Approvals
}

// newHarnessFrom is newHarness with the manifest's text.
func newHarnessFrom(t *testing.T, manifest string) *harness {
	t.Helper()
	m := testkit.Manifest(t, manifest)
	engine := testkit.Policies(t)
	store := testkit.Store(t)
	c := testkit.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	ex, err := executor.New(executor.Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: store, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	site := executor.ServeOn(t, "127.0.0.1:0", demosite.New(demosite.Options{}))
	return &harness{ex: ex, m: m, store: store, clock: c, site: site}
}

func (h *harness) call(t *testing.T, session, command string, raw map[string]any) *toolclad.Reply {
	t.Helper()
	cmd := h.m.Command(command)
	if cmd == nil {
		t.Fatalf("manifest has no command %s", command)
	}
	args, err := cmd.Validate(raw)
	r := h.ex.Run(context.Background(), &toolclad.Call{Manifest: h.m, Command: cmd, Tool: "loop." + command,
		SessionID: session, RawArgs: raw, Args: args, ArgErr: err, Progress: func(string) {}})
	return r
}

func (h *harness) records(t *testing.T) []*evidence.Envelope {
	t.Helper()
	sessions, err := h.store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var all []*evidence.Envelope
	for _, s := range sessions {
		recs, err := h.store.Records(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
	}
	return all
}

func TestMaxInteractionsIsEnforced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2, false)
	for i := 0; i < 2; i++ {
		if r := h.call(t, "s1", "snapshot", nil); r.IsError {
			t.Fatalf("call %d refused: %s", i+1, r.Text)
		}
	}
	r := h.call(t, "s1", "snapshot", nil)
	if !r.IsError || !strings.Contains(r.Text, "max_interactions") {
		t.Fatalf("third call with max_interactions = 2: %+v", r)
	}
	recs := h.records(t)
	if len(recs) != 3 || recs[2].Decision.Allowed || recs[2].Decision.Stage != "limits" {
		t.Fatalf("evidence: %d records, last %+v", len(recs), recs[len(recs)-1].Decision)
	}
}

func TestIdleAndSessionTimeoutsAreEnforced(t *testing.T) {
	t.Parallel()
	// on_expiry = "refuse": an expired session refuses every later call.
	refusing := strings.Replace(fmt.Sprintf(loopManifest, false, 50), "[browser]\n", "[browser]\non_expiry = \"refuse\"\n", 1)
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		h := newHarnessFrom(t, refusing)
		if r := h.call(t, "s1", "snapshot", nil); r.IsError {
			t.Fatal(r.Text)
		}
		h.clock.Advance(61 * time.Second)
		for i := 0; i < 2; i++ { // expired for good, not just for one call
			if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "idle_timeout_seconds") {
				t.Fatalf("call after 61s idle (limit 60s): %+v", r)
			}
		}
		if r := h.call(t, "s2", "snapshot", nil); r.IsError {
			t.Fatalf("another MCP session is unaffected: %s", r.Text)
		}
	})
	t.Run("session lifetime", func(t *testing.T) {
		t.Parallel()
		h := newHarnessFrom(t, refusing)
		for i := 0; i < 3; i++ {
			if r := h.call(t, "s1", "snapshot", nil); r.IsError {
				t.Fatalf("call at +%ds: %s", i*50, r.Text)
			}
			h.clock.Advance(50 * time.Second)
		}
		// Now 150s after the start: past session_timeout_seconds = 100,
		// although no gap was longer than the idle timeout.
		if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "session_timeout_seconds") {
			t.Fatalf("call 150s into a 100s session: %+v", r)
		}
	})
}

// TestExpiredSessionIsReplaced: by default the next call after an expiry
// (idle or lifetime) starts a new session — a new evidence session with a
// fresh browser context — and its reply says so, once. A used-up
// max_interactions budget is not an expiry: it keeps refusing.
func TestExpiredSessionIsReplaced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 3, false)
	if r := h.call(t, "s1", "navigate", map[string]any{"url": h.site + "/login"}); r.IsError {
		t.Fatal(r.Text)
	}
	h.clock.Advance(61 * time.Second)
	r := h.call(t, "s1", "snapshot", nil)
	if r.IsError || !strings.Contains(r.Text, "expired (idle_timeout_seconds") || !strings.Contains(r.Text, "new session") ||
		!strings.Contains(r.Text, `url="about:blank"`) {
		t.Fatalf("first call after an idle expiry: %+v", r)
	}
	if r := h.call(t, "s1", "snapshot", nil); r.IsError || strings.Contains(r.Text, "new session") {
		t.Fatalf("the notice is said once: %+v", r)
	}
	h.call(t, "s1", "snapshot", nil)
	// max_interactions is a budget, not an expiry: it stays used up.
	for i := 0; i < 2; i++ {
		if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "max_interactions") {
			t.Fatalf("call %d over a 3-interaction budget: %+v", i+4, r)
		}
	}
	sessions, err := h.store.Sessions()
	if err != nil || len(sessions) != 2 {
		t.Fatalf("evidence sessions: %d (%v), want 2", len(sessions), err)
	}
}

func TestSessionsHaveIsolatedBrowserContexts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	h.call(t, "alice", "navigate", map[string]any{"url": h.site + "/login"})
	h.call(t, "alice", "type_text", map[string]any{"selector": "input[name=username]", "text": "alice"})
	h.call(t, "alice", "type_text", map[string]any{"selector": "input[name=password]", "text": "pw"})
	if r := h.call(t, "alice", "click", map[string]any{"selector": "button[type=submit]"}); !strings.Contains(r.Text, `title="Dashboard"`) {
		t.Fatalf("alice did not sign in: %s", r.Text)
	}
	// Bob's session has its own browser context: no cookie, so the
	// dashboard sends him to the sign-in page.
	r := h.call(t, "bob", "navigate", map[string]any{"url": h.site + "/dashboard"})
	if r.IsError || !strings.Contains(r.Text, `title="Sign in"`) || strings.Contains(r.Text, "is_authenticated=true") {
		t.Fatalf("bob's session saw alice's login: %s", r.Text)
	}
}

func TestFinalURLOutsideScopeIsRefusedAndReset(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, true)
	// A page on 127.0.0.3 stands in for a forbidden site. (Request
	// interception, which stops the request itself, is a later layer; this
	// test is about the check on the final URL.)
	out := executor.ServeOn(t, "127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<title>out</title>")) })) + "/"

	if r := h.call(t, "s", "navigate", map[string]any{"url": h.site + "/jump?to=" + out}); r.IsError {
		t.Fatal(r.Text)
	}
	r := h.call(t, "s", "click", map[string]any{"selector": "#go"})
	if !r.IsError || !strings.Contains(r.Text, "DENIED at final_url") || !strings.Contains(r.Text, "about:blank") {
		t.Fatalf("script navigation out of scope: %+v", r)
	}
	recs := h.records(t)
	last := recs[len(recs)-1]
	if last.Decision.Allowed || last.After["url"] != "about:blank" {
		t.Fatalf("evidence of the reset: decision %+v after %v", last.Decision, last.After)
	}
	// screenshots = true: every interaction's image is stored by hash.
	for _, rec := range recs {
		if rec.ScreenshotSHA256 == "" {
			t.Fatalf("record %d has no screenshot hash", rec.Seq)
		}
		png, err := h.store.Screenshot(rec.ScreenshotSHA256)
		if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
			t.Fatalf("record %d screenshot: %v (%d bytes)", rec.Seq, err, len(png))
		}
	}
}

func TestSnapshotFollowsExtractMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want, notWant string }{
		{"accessibility_tree", "# Documentation", "<h1>"},
		{"html", "<h1>Documentation</h1>", "# Documentation"},
		{"text", "Documentation\n", "<h1>"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 50, false)
			h.m.Browser.ExtractMode = tc.mode
			h.call(t, "s", "navigate", map[string]any{"url": h.site + "/docs"})
			r := h.call(t, "s", "snapshot", nil)
			if r.IsError || !strings.Contains(r.Text, tc.want) || strings.Contains(r.Text, tc.notWant) {
				t.Fatalf("snapshot in %s mode:\n%s", tc.mode, r.Text)
			}
		})
	}
}

// TestCommands runs each command once against the demo site and checks
// what it did to the page, not just that it answered.
func TestCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, false)
	must := func(command string, args map[string]any) string {
		t.Helper()
		r := h.call(t, "s", command, args)
		if r.IsError {
			t.Fatalf("%s %v refused: %s", command, args, r.Text)
		}
		return r.Text
	}
	must("navigate", map[string]any{"url": h.site + "/login"})
	must("type_text", map[string]any{"selector": "input[name=username]", "text": "carol"})
	must("type_text", map[string]any{"selector": "input[name=password]", "text": "pw"})
	// submit_form with no target: the page's only form. The page is not
	// authenticated yet, so the shipped policies allow it.
	if out := must("submit_form", nil); !strings.Contains(out, `title="Dashboard"`) {
		t.Fatalf("submit_form did not sign in: %s", out)
	}
	if out := must("extract_html", map[string]any{"selector": "main p"}); !strings.Contains(out, "<p>Welcome, carol!</p>") {
		t.Fatalf("extract_html: %s", out)
	}
	if out := must("wait_for", map[string]any{"text": "Welcome, carol"}); !strings.Contains(out, "is present") {
		t.Fatalf("wait_for text: %s", out)
	}
	r := h.call(t, "s", "wait_for", map[string]any{"selector": "#never", "timeout_ms": 200})
	if !r.IsError || !strings.Contains(r.Text, "did not appear within 200 ms") {
		t.Fatalf("wait_for a missing selector: %+v", r)
	}
	if out := must("go_back", nil); !strings.Contains(out, "/login") {
		t.Fatalf("go_back: %s", out)
	}
	if out := must("list_tabs", nil); !strings.Contains(out, "t1 [session]") || !strings.Contains(out, "(current)") {
		t.Fatalf("list_tabs: %s", out)
	}
	if out := must("network_timing", nil); !strings.Contains(out, `"navigation"`) {
		t.Fatalf("network_timing: %s", out)
	}
	if out := must("scroll", map[string]any{"direction": "down", "amount": 1}); !strings.Contains(out, "scrolled down") {
		t.Fatalf("scroll: %s", out)
	}
	shot := h.call(t, "s", "screenshot", nil)
	if shot.IsError || len(shot.Image) < 8 || string(shot.Image[1:4]) != "PNG" {
		t.Fatalf("screenshot: %s (%d bytes)", shot.Text, len(shot.Image))
	}
	if h.call(t, "s", "click", map[string]any{"selector": "#nope"}).IsError == false {
		t.Fatal("click on a selector that matches nothing was not refused")
	}
}

// A click on a submit button is a form submission: without submit_form in
// the manifest it is refused, so submit_form's rules cannot be dodged.
func TestClickThatSubmitsNeedsSubmitForm(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	var kept []*toolclad.Command
	for _, c := range h.m.Commands {
		if c.Name != "submit_form" {
			kept = append(kept, c)
		}
	}
	h.m.Commands = kept
	h.call(t, "s", "navigate", map[string]any{"url": h.site + "/login"})
	r := h.call(t, "s", "click", map[string]any{"selector": "button[type=submit]"})
	if !r.IsError || !strings.Contains(r.Text, "submit_form") {
		t.Fatalf("click on a submit button without submit_form declared: %+v", r)
	}
	if strings.Contains(r.Text, "Dashboard") {
		t.Fatalf("the form was submitted anyway: %s", r.Text)
	}
}

// newHarnessWithCanary is newHarness with the demo site's forbidden links
// pointing at a canary on 127.0.0.2, which must see no request.
func newHarnessWithCanary(t *testing.T) (*harness, *demosite.Canary) {
	t.Helper()
	h := newHarness(t, 100, false)
	canary := &demosite.Canary{}
	h.canary = executor.ServeOn(t, "127.0.0.2:0", canary)
	h.site = executor.ServeOn(t, "127.0.0.1:0", demosite.New(demosite.Options{ForbiddenURL: h.canary + "/steal"}))
	return h, canary
}

func TestFormAndOverlayTrapsAreRefusedBeforeActing(t *testing.T) {
	t.Parallel()
	h, canary := newHarnessWithCanary(t)
	h.call(t, "s", "navigate", map[string]any{"url": h.site + "/trap/form"})
	for _, tc := range []struct {
		command string
		args    map[string]any
	}{
		{"click", map[string]any{"selector": "#f button"}},            // a plain <button> submits
		{"submit_form", map[string]any{"selector": "#u"}},             // the field's form
		{"submit_form", map[string]any{"selector": "#f"}},             // the form itself
		{"submit_form", nil},                                          // the page's only form
		{"type_text", map[string]any{"selector": "#u", "text": "hi"}}, // allowed: typing is not submitting
	} {
		r := h.call(t, "s", tc.command, tc.args)
		if tc.command == "type_text" {
			if r.IsError {
				t.Fatalf("type_text refused: %s", r.Text)
			}
			continue
		}
		if !r.IsError || !strings.Contains(r.Text, "DENIED at scope") || !strings.Contains(r.Text, "/steal") {
			t.Fatalf("%s %v on a form posting out of scope: %+v", tc.command, tc.args, r)
		}
	}
	// The page redefines the built-ins an inspection script would use; the
	// isolated world does not see its changes.
	h.call(t, "s", "navigate", map[string]any{"url": h.site + "/trap/liar"})
	if r := h.call(t, "s", "click", map[string]any{"selector": "#f button"}); !r.IsError || !strings.Contains(r.Text, "DENIED at scope") {
		t.Fatalf("click on a lying page submit button: %+v", r)
	}
	h.call(t, "s", "navigate", map[string]any{"url": h.site + "/trap/overlay"})
	r := h.call(t, "s", "click", map[string]any{"selector": "#docs"})
	if !r.IsError || !strings.Contains(r.Text, "covered") {
		t.Fatalf("click on a link under a transparent out-of-scope overlay: %+v", r)
	}
	if n := canary.Hits(); n != 0 {
		t.Fatalf("canary saw %d request(s): %v", n, canary.Seen())
	}
}

func TestPasswordIsMaskedInEvidence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	h.call(t, "s", "navigate", map[string]any{"url": h.site + "/login"})
	h.call(t, "s", "type_text", map[string]any{"selector": "input[name=password]", "text": "hunter2-secret"})
	h.call(t, "s", "type_text", map[string]any{"selector": "input[name=username]", "text": "dave"})
	recs := h.records(t)
	pw, user := recs[1], recs[2]
	if s := fmt.Sprint(pw.Args); strings.Contains(s, "hunter2") || !strings.Contains(s, "masked: 14 characters") {
		t.Fatalf("password field text in evidence: %v", pw.Args)
	}
	if user.Args["text"] != "dave" {
		t.Fatalf("ordinary field text should be recorded: %v", user.Args)
	}
}

// These pages reach a forbidden host by themselves (a popup, a timed
// redirect). Without request interception the request itself still leaves
// (a later layer stops it); here the gate must refuse the outcome, close
// the popup, and keep go_back from returning there.
func TestPagesThatLeaveTheScopeByThemselves(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, false)
	out := executor.ServeOn(t, "127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<title>out</title>out")) })) + "/"

	h.call(t, "s", "navigate", map[string]any{"url": h.site + "/trap/popup?to=" + out})
	if r := h.call(t, "s", "click", map[string]any{"selector": "#open"}); !r.IsError || !strings.Contains(r.Text, "closed") || !strings.Contains(r.Text, "tab_count=1") {
		t.Fatalf("click that opens an out-of-scope popup: %+v", r)
	}

	// The page moves itself 200 ms after loading: during the navigate call
	// (on a slow machine), or between calls. Either way the gate refuses:
	// the navigate at final_url, or the next call before it acts.
	r1 := h.call(t, "s", "navigate", map[string]any{"url": h.site + "/trap/later?to=" + out})
	time.Sleep(time.Second) // let the page move itself (the test waits for the page, not the gate)
	r2 := h.call(t, "s", "snapshot", nil)
	switch {
	case r1.IsError && strings.Contains(r1.Text, "DENIED at final_url"):
		if r2.IsError || !strings.Contains(r2.Text, `url="about:blank"`) {
			t.Fatalf("after the reset the tab should be blank and usable: %+v", r2)
		}
	case !r1.IsError:
		if !r2.IsError || !strings.Contains(r2.Text, "before this call") || !strings.Contains(r2.Text, `url="about:blank"`) {
			t.Fatalf("call on a tab that drifted out of scope: %+v", r2)
		}
	default:
		t.Fatalf("navigate to the moving page: %+v", r1)
	}
	r := h.call(t, "s", "go_back", nil)
	if !r.IsError || strings.Contains(r.Text, "127.0.0.3") && !strings.Contains(r.Text, "DENIED") {
		t.Fatalf("go_back after a reset: %+v", r)
	}
	if !strings.Contains(r.Text, `url="about:blank"`) {
		t.Fatalf("go_back left about:blank: %s", r.Text)
	}
}

// Requests a page makes by itself are checked before they are sent; the
// call reports them and the evidence records them.
func TestPageRequestsAreInterceptedAndReported(t *testing.T) {
	t.Parallel()
	h, canary := newHarnessWithCanary(t)
	canaryURL := h.canary
	page := executor.ServeOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>p</title><img src="%s/img.png"><script>fetch("%s/api").catch(() => {})</script>`, canaryURL, canaryURL)
	}))
	r := h.call(t, "s", "navigate", map[string]any{"url": page + "/"})
	if r.IsError || !strings.Contains(r.Text, "egress gate blocked 2 request(s)") || !strings.Contains(r.Text, "/img.png") {
		t.Fatalf("navigate to a page that loads from the canary: %+v", r)
	}
	recs := h.records(t)
	if last := recs[len(recs)-1]; len(last.Blocked) != 2 || last.Blocked[0].Layer != "interception" {
		t.Fatalf("evidence of the blocked requests: %+v", last.Blocked)
	}
	if n := canary.Hits(); n != 0 {
		t.Fatalf("canary saw %d request(s): %v", n, canary.Seen())
	}
}

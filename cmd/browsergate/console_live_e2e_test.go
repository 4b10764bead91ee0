package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
)

// consoleLiveManifest: typing is held for a human; a secret may be typed
// into a text field of the test site, as <PORTAL_PW>.
const consoleLiveManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.type_text]
human_approval = true
[secrets.PORTAL_PW]
file = "%s"
domains = ["127.0.0.1"]
fields = "text"
`

// consoleWait is how long the console's page is given to show a change
// (a bound on a wait for a condition, not a timing assertion).
const consoleWait = 60 * time.Second

// TestConsoleLive: an operator has the console open in Chromium while
// agents work. Without a reload (a mark set in the page survives): a
// session appears; a call held for a human is offered ("1 new held call:
// show it") without moving the End session button, and shown when asked
// for, its arguments as the agent wrote them (<PORTAL_PW>, as text, no
// element of that name); a session whose client ended it shows as ended,
// with why; a call denied on the operator socket keeps its place, greyed,
// its buttons disabled, and the denial shows. Approve in the page, and
// the call's outcome (it ran) shows. End session in the page asks again;
// once confirmed, the row shows the session ended by the operator, the agent's next call
// is refused saying so, and the evidence records the end with the
// operator's name and the approval as the console's. serve printed
// where to sign in, and not the token.
func TestConsoleLive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "portal-pw")
	if err := os.WriteFile(secret, []byte("Zq7#mX2!kd9w\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	site, _ := serveLogged(t, map[string]string{"/form": `<title>form</title><input id=user aria-label=User>`})
	d := startHTTP(t, strings.Replace(consoleLiveManifest, "%s", secret, 1), "", "--operator-token-file", operatorFile(t), "--approval-timeout", "3m")

	ctx := operatorTab(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.url+"/"),
		chromedp.Click(`a[href="/console/login"]`),
		chromedp.WaitVisible(`input[name=token]`),
		chromedp.SendKeys(`input[name=token]`, olga),
		chromedp.Submit(`input[name=token]`),
		chromedp.WaitVisible(`header .who`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what, predicate string) string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Poll[string](predicate, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(consoleWait)))
		if err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("the console did not show %s: %v\n%s", what, err, page)
		}
		return got
	}
	markPage := func() {
		t.Helper()
		waitFor("that it follows the events", `document.querySelector('#live[data-state="live"]') && 'live'`)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.bgNotReloaded = true`)); err != nil {
			t.Fatal(err)
		}
	}
	notReloaded := func(what string) {
		t.Helper()
		if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.bgNotReloaded === true`)); err != nil || !same {
			t.Errorf("the page was reloaded to show %s (%v)", what, err)
		}
	}

	// A session and a held call appear in the open page.
	markPage()
	alice := d.connect(t, "alice-token")
	if _, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/form"}); refused {
		t.Fatal("navigate refused")
	}
	aliceSession := waitFor("alice's session", `[...document.querySelectorAll('#sessions tr.open')].map(r => r.cells[1].textContent === 'alice' && r.dataset.key).find(Boolean)`)
	type reply struct {
		text    string
		refused bool
	}
	endTop := func() float64 {
		t.Helper()
		top, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('#sessions tr[data-key="`+aliceSession+`"] button.end').getBoundingClientRect().top`))
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	// showHeld asks for the held calls the page offers, and waits until
	// the console takes clicks on their buttons again.
	showHeld := func(what string) {
		t.Helper()
		waitFor(what+" offered", `(document.querySelector('#held-new button.show-held') || {}).textContent`)
		if err := chromedp.Do(ctx, chromedp.Click(`#held-new button.show-held`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // clicks on Approve, Deny and End are ignored for half a second after the page changed
	}
	before := endTop()
	held := make(chan reply, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "e2e.type_text", Arguments: map[string]any{"selector": "#user", "text": "<PORTAL_PW>"}})
		if err != nil {
			held <- reply{err.Error(), true}
			return
		}
		held <- reply{resultText(res), res.IsError}
	}()
	offered := waitFor("the held call offered", `(document.querySelector('#held-new button.show-held') || {}).textContent`)
	if offered != "1 new held call: show it" {
		t.Errorf("the new held call is offered as %q", offered)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#held section.held').length`)); n != 0 {
		t.Errorf("the new held call was put into the page (%d) before the operator asked for it", n)
	}
	if after := endTop(); after != before {
		t.Errorf("the End session button moved from %v to %v as a held call came", before, after)
	}
	showHeld("the held call")
	args := waitFor("the held call", `(document.querySelector('#held section.held[data-version="pending"] pre.args') || {}).textContent`)
	notReloaded("the session and the held call")
	if !strings.Contains(args, `"text": "<PORTAL_PW>"`) || strings.Contains(args, `\u003c`) {
		t.Errorf("the held call's arguments are not shown as written:\n%s", args)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('PORTAL_PW, portal_pw').length`)); n != 0 {
		t.Errorf("the arguments became %d element(s) of the page", n)
	}

	// Approve: the page shows what became of the call.
	if err := chromedp.Do(ctx, chromedp.Click(`#held section.held button.approve`), chromedp.WaitVisible(`#answered section.answered`)); err != nil {
		t.Fatal(err)
	}
	outcome := waitFor("the approved call's outcome", `(document.querySelector('#answered .outcome.ran') || {}).textContent`)
	if outcome != "Then the call ran: allowed." {
		t.Errorf("the approved call's outcome: %q", outcome)
	}
	if answer, _ := chromedp.Run(ctx, chromedp.Text(`#answered .answer`)); !strings.Contains(answer, "Approved by olga (console)") {
		t.Errorf("the answer: %q", answer)
	}
	// The answered call's heading names the tool once, not the tool and
	// then its command again.
	if heading, _ := chromedp.Run(ctx, chromedp.Text(`#answered section.answered h2`)); strings.TrimSpace(heading) != "e2e.type_text" {
		t.Errorf("the answered call's heading: %q, want the tool once", heading)
	}
	select {
	case r := <-held:
		if r.refused {
			t.Errorf("the approved call was refused:\n%s", r.text)
		}
	case <-time.After(consoleWait):
		t.Fatal("the approved call did not return")
	}

	// A call denied elsewhere (the operator socket): its card stays in
	// place, its buttons gone, and the denial shows, without a reload.
	markPage()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "e2e.type_text", Arguments: map[string]any{"selector": "#user", "text": "again"}})
		if err != nil {
			held <- reply{err.Error(), true}
			return
		}
		held <- reply{resultText(res), res.IsError}
	}()
	showHeld("the second held call")
	id := waitFor("the second held call", `(document.querySelector('#held section.held[data-version="pending"]:not(.gone)') || {dataset: {}}).dataset.key`)
	if out, err := exec.Command(binary, "approvals", "deny", id, "--evidence", d.evidence, "--by", "bob", "--note", "not this one").CombinedOutput(); err != nil {
		t.Fatalf("approvals deny: %v\n%s", err, out)
	}
	waitFor("the denied call's card greyed in place", `document.querySelector('#held section.held.gone[data-key="`+id+`"]:has(button.approve:disabled):has(button.deny:disabled)') && 'gone'`)
	denied := waitFor("the denial", `(document.querySelector('#answered section[id="answer-`+id+`"] .answer') || {}).textContent`)
	notReloaded("a call denied elsewhere")
	if !strings.Contains(denied, "Denied by bob") || !strings.Contains(denied, "not this one") {
		t.Errorf("the denial as shown: %q", denied)
	}
	select {
	case r := <-held:
		if !r.refused || !strings.Contains(r.text, "denied") {
			t.Errorf("the denied call (refused %v):\n%s", r.refused, r.text)
		}
	case <-time.After(consoleWait):
		t.Fatal("the denied call did not return")
	}

	// A session whose client went away shows as ended, without a reload.
	markPage()
	bob := d.connect(t, "bob-token")
	callText(t, bob, "e2e.navigate", map[string]any{"url": site + "/form"})
	bobSession := waitFor("bob's session", `[...document.querySelectorAll('#sessions tr.open')].map(r => r.cells[1].textContent === 'bob' && r.dataset.key).find(Boolean)`)
	bob.Close()
	why := waitFor("bob's session ended", `(document.querySelector('#sessions tr.ended[data-key="`+bobSession+`"] td.state') || {}).textContent`)
	notReloaded("a session that ended")
	if !strings.Contains(why, "the MCP client ended its session") {
		t.Errorf("bob's session is not shown as ended by its client: %q", why)
	}

	// End alice's session, which asks again: the agent's next call is
	// refused, saying so.
	time.Sleep(time.Second) // clicks are ignored for half a second after the page changed
	if err := chromedp.Do(ctx, chromedp.Click(`#sessions tr[data-key="`+aliceSession+`"] button.end`), chromedp.WaitVisible(`#end-confirm`)); err != nil {
		t.Fatal(err)
	}
	if text, _ := callText(t, alice, "e2e.snapshot", nil); strings.Contains(text, "ended by the operator") {
		t.Errorf("the session ended before the operator confirmed:\n%s", text)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`#end-confirm`), chromedp.WaitVisible(`#sessions tr.ended[data-key="`+aliceSession+`"]`)); err != nil {
		t.Fatal(err)
	}
	if why, _ := chromedp.Run(ctx, chromedp.Text(`#sessions tr[data-key="`+aliceSession+`"] td.state`)); !strings.Contains(why, "the operator olga ended it (console)") {
		t.Errorf("alice's session is not shown as ended by olga: %q", why)
	}
	text, refused := callText(t, alice, "e2e.snapshot", nil)
	if !refused || !strings.Contains(text, "session "+aliceSession+" was ended by the operator olga (console)") || !strings.Contains(text, "nothing was done") {
		t.Errorf("the agent's call after the operator ended its session (refused %v):\n%s", refused, text)
	}

	d.stop(t)
	if want := "browsergate: console at " + d.url + "/console/login (sign in with your operator token: in your line NAME:TOKEN of "; !strings.Contains(d.stderr.String(), want) {
		t.Errorf("serve did not print where to sign in (%q):\n%s", want, d.stderr.String())
	}
	if strings.Contains(d.stderr.String(), olga) {
		t.Error("serve printed the operator's token")
	}
	end := lastRecordWhere(t, d.evidence, func(e *evidence.Envelope) bool { return e.Session == aliceSession && e.Kind == evidence.KindSessionEnd })
	if end == nil || end.Decision.Allowed || end.Decision.Rule != "ended by the operator" || !strings.Contains(strings.Join(end.Decision.Reasons, " "), "the operator olga ended the session (console)") {
		t.Errorf("the evidence of the operator's end: %+v", end)
	}
	typed := lastRecordWhere(t, d.evidence, func(e *evidence.Envelope) bool {
		return e.Session == aliceSession && e.Command == "type_text" && e.Args["text"] == "<PORTAL_PW>"
	})
	if typed == nil || !typed.Decision.Allowed || typed.Decision.Approval == nil || typed.Decision.Approval.Channel != "console" || typed.Decision.Approval.By != "olga" {
		t.Errorf("the approved call's evidence: %+v", typed)
	}
}

// TestServeRefusesAWeakOperatorToken: serve does not start with an
// operator token that is long enough but easy to guess; the error names
// the file, the line and the operator, and says how to make a token.
func TestServeRefusesAWeakOperatorToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "operators")
	if err := os.WriteFile(tokens, []byte("# operators\nolga:"+olga+"\npat:pat-browsergate-operator-token-2026\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(manifest, []byte(inputManifest()), 0o644); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(dir, "agents.toml")
	if err := os.WriteFile(agents, []byte(testAgents), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "serve", "--manifest", manifest, "--policies", shippedPoliciesWith(t, dir, ""), "--evidence", filepath.Join(dir, "e.db"),
		"--http", "127.0.0.1:0", "--agents", agents, "--operator-token-file", tokens, "--prelaunch=false").CombinedOutput()
	if err == nil || !strings.Contains(string(out), tokens+":3: pat's token is too easy to guess") || !strings.Contains(string(out), "/dev/urandom") ||
		strings.Contains(string(out), "listening on") {
		t.Errorf("serve with a weak operator token (%v):\n%s", err, out)
	}
}

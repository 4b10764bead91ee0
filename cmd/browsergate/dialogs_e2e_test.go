package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// dialogPages are a page for each JavaScript dialog type.
var dialogPages = map[string]string{
	"/alert":   `<title>alert</title><button id=b onclick="alert('Saved!')">save</button>`,
	"/confirm": `<title>confirm</title><button id=b onclick="document.getElementById('o').textContent = confirm('Delete the report?') ? 'deleted' : 'kept'">delete</button><p id=o>untouched</p>`,
	"/prompt":  `<title>prompt</title><button id=b onclick="document.getElementById('o').textContent = 'hello ' + prompt('Your name?', 'anon')">greet</button><p id=o>nobody</p>`,
	"/leave": `<title>leave</title><button id=b onclick="window.onbeforeunload = e => { e.preventDefault(); e.returnValue = 'unsaved' }; document.getElementById('o').textContent = 'armed'">edit</button><p id=o>calm</p>
<input type=password id=p aria-label=Password><button id=show onclick="alert('the password is ' + document.getElementById('p').value)">show</button>`,
}

// TestDialogsAsk: with [browser] dialogs = "ask" (the default where
// handle_dialog is declared) a call that opens an alert, a confirm, a
// prompt or a beforeunload dialog returns at once and says what it asks;
// every other call is refused until handle_dialog answers it, and the
// page goes on with the answer. A dialog that shows a secret shows it
// masked.
func TestDialogsAsk(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest()+`[browser.commands.handle_dialog]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
`)
	site, _ := serveLogged(t, dialogPages)
	show := func(part string) {
		t.Helper()
		if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, part) {
			t.Errorf("the page does not show %q:\n%s", part, snap)
		}
	}
	f.mustRefuse(t, "e2e.handle_dialog", map[string]any{"accept": true}, "no JavaScript dialog is waiting")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/alert"})
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	if !strings.Contains(out, `the page opened a JavaScript alert dialog: "Saved!"`) || !strings.Contains(out, "handle_dialog") {
		t.Errorf("the click does not report the alert it opened:\n%s", out)
	}
	f.mustRefuse(t, "e2e.snapshot", nil, "alert dialog the page opened is waiting")
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": site + "/confirm"}, "handle_dialog first")
	f.mustRefuse(t, "e2e.handle_dialog", map[string]any{"accept": true, "text": "x"}, "text answers only a prompt")
	if out := f.mustAllow(t, "e2e.handle_dialog", map[string]any{"accept": true}); !strings.Contains(out, "accepted the alert dialog") {
		t.Errorf("handle_dialog:\n%s", out)
	}
	show("save")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/confirm"})
	if out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"}); !strings.Contains(out, `confirm dialog: "Delete the report?"`) {
		t.Errorf("the click does not report the confirm:\n%s", out)
	}
	f.mustAllow(t, "e2e.handle_dialog", map[string]any{"accept": false})
	show("kept")
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	f.mustAllow(t, "e2e.handle_dialog", map[string]any{"accept": true})
	show("deleted")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/prompt"})
	if out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"}); !strings.Contains(out, `prompt dialog: "Your name?" (default answer "anon")`) {
		t.Errorf("the click does not report the prompt:\n%s", out)
	}
	f.mustAllow(t, "e2e.handle_dialog", map[string]any{"accept": true, "text": "Ada"})
	show("hello Ada")

	// beforeunload: the agent's navigate away is held at the dialog, and
	// goes on when the agent accepts it.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/leave"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	show("armed")
	out = f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/alert"})
	if !strings.Contains(out, "beforeunload dialog") {
		t.Fatalf("navigating away does not report the beforeunload dialog:\n%s", out)
	}
	out = f.mustAllow(t, "e2e.handle_dialog", map[string]any{"accept": true})
	if !strings.Contains(out, fmt.Sprintf(`url="%s/alert"`, site)) {
		t.Errorf("accepting beforeunload did not let the tab leave:\n%s", out)
	}

	// A secret the page puts in a dialog is masked.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/leave"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#p", "text": "<APP_PASSWORD>"})
	out = f.mustAllow(t, "e2e.click", map[string]any{"selector": "#show"})
	if strings.Contains(out, secretValue) || !strings.Contains(out, "[secret APP_PASSWORD]") {
		t.Errorf("the dialog's message is not masked:\n%s", out)
	}
	f.mustAllow(t, "e2e.handle_dialog", map[string]any{"accept": true})
}

// TestDialogsAnsweredAtOnce: with dialogs = "accept" a confirm is
// accepted at once and the reply says so; the page goes on. A secret in
// such a dialog's message is masked in the reply.
func TestDialogsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(inputManifest(), "[browser]\n", "[browser]\ndialogs = \"accept\"\n", 1)+`[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
`)
	site, _ := serveLogged(t, dialogPages)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/confirm"})
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	if !strings.Contains(out, `[answered 1 JavaScript dialog(s) at once: ["accepted confirm: Delete the report?"]]`) {
		t.Errorf("the reply does not say the confirm was accepted:\n%s", out)
	}
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "deleted") {
		t.Errorf("the page did not get the acceptance:\n%s", snap)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/leave"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#p", "text": "<APP_PASSWORD>"})
	out = f.mustAllow(t, "e2e.click", map[string]any{"selector": "#show"})
	if strings.Contains(out, secretValue) || !strings.Contains(out, `accepted alert: the password is \x5bsecret APP_PASSWORD\x5d`) {
		t.Errorf("the dialog answered at once is not reported masked:\n%s", out)
	}
}

// TestDialogsOfFrames: only the main document's dialogs are held for
// the agent. A frame's dialog (out of process, or nested in such a frame)
// is answered at once and the reply says so: were it held, a page that
// then removes the frame would crash Chromium at the tab's next
// navigation. When a frame opens a dialog while a confirm is held, the
// agent's answer, or the browser's (it may close the confirm), is the
// one the page gets, and the agent is told which.
func TestDialogsOfFrames(t *testing.T) {
	t.Parallel()
	m := strings.Replace(inputManifest(), `allowed_domains = ["127.0.0.1"]`, `allowed_domains = ["127.0.0.1", "127.0.0.3"]`, 1)
	m = strings.Replace(m, `allow_private_cidrs = ["127.0.0.1/32"]`, `allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`, 1)
	f := startWith(t, m+"[browser.commands.handle_dialog]\n")
	// The frames open their dialog when the top page posts them a
	// message: at once, so that it opens while the agent's click runs,
	// or a second later.
	other, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/frame": `<title>frame</title><p>framed</p><script>onmessage = e => { if (e.data == 'now') alert('from the frame'); else setTimeout(() => alert('later, from the frame'), 1000) }</script>`,
		"/outer": `<title>outer</title><iframe src="/frame"></iframe>`,
	})
	top := `<title>top</title><p id=o>top</p><iframe id=fr src="%s"></iframe><button id=b onclick="%s">go</button>`
	site, _ := serveLogged(t, map[string]string{
		"/direct": fmt.Sprintf(top, other+"/frame", "setTimeout(() => document.getElementById('fr').remove(), 300); frames[0].postMessage('now', '*')"),
		"/nested": fmt.Sprintf(top, other+"/outer", "setTimeout(() => document.getElementById('fr').remove(), 300); frames[0].frames[0].postMessage('now', '*')"),
		"/second": fmt.Sprintf(top, other+"/frame", "frames[0].postMessage('later', '*'); document.getElementById('o').textContent = 'answer=' + confirm('Delete everything?')"),
		"/after":  `<title>after</title><p>still here</p>`,
	})
	// until calls snapshot until its reply holds want, or with want
	// "-x", until it no longer holds x (a dialog that is held refuses it
	// meanwhile), and returns that reply.
	until := func(want string) string {
		t.Helper()
		var out string
		for range 50 {
			var refused bool
			out, refused = f.call(t, "e2e.snapshot", nil)
			if refused && !strings.Contains(out, "dialog") {
				t.Fatalf("snapshot refused for another reason:\n%s", out)
			}
			gone, ok := strings.CutPrefix(want, "-")
			if !refused && (ok && !strings.Contains(out, gone) || !ok && strings.Contains(out, want)) {
				return out
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the snapshot never showed %q; the last reply:\n%s", want, out)
		return ""
	}
	for _, page := range []string{"/direct", "/nested"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + page})
		until("framed")
		out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
		if !strings.Contains(out, `answered 1 JavaScript dialog(s) at once: ["dismissed alert of a frame: from the frame"]`) {
			t.Errorf("%s: the click does not say the frame's alert was answered at once:\n%s", page, out)
		}
		f.mustRefuse(t, "e2e.handle_dialog", map[string]any{"accept": true}, "no JavaScript dialog is waiting")
		// The page removes the frame; the tab can still move on.
		until("-framed")
		if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/after"}); !strings.Contains(out, `title="after"`) {
			t.Fatalf("%s: navigating on after the frame went:\n%s", page, out)
		}
	}

	// A frame in another process opens an alert while the confirm is
	// held: Chromium either keeps it until the confirm is answered, or
	// closes the confirm (dismissed). Whichever it does, the agent is told
	// what the page got.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/second"})
	until("framed")
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	if !strings.Contains(out, `confirm dialog: "Delete everything?"`) {
		t.Fatalf("the click does not report the confirm:\n%s", out)
	}
	time.Sleep(2500 * time.Millisecond) // the frame's alert is due a second after the click
	out, refused := f.call(t, "e2e.handle_dialog", map[string]any{"accept": true})
	switch {
	case !refused && strings.Contains(out, "accepted the confirm dialog"):
		t.Log("Chromium kept the frame's alert until the confirm was answered")
		until("answer=true")
	case refused && strings.Contains(out, `no JavaScript dialog is waiting for an answer: the confirm dialog that was waiting for an answer ("Delete everything?") is gone: the browser dismissed it`):
		t.Log("Chromium closed the confirm when the frame's alert opened")
		until("answer=false")
	default:
		t.Fatalf("handle_dialog after a frame's alert (refused %v):\n%s", refused, out)
	}
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/after"}); !strings.Contains(out, `title="after"`) {
		t.Fatalf("navigating on after the second dialog:\n%s", out)
	}
}

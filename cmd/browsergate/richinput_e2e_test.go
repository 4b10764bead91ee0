package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
)

// richClickArgs are click's arguments with its opt-in ones: button,
// click_count and modifiers.
const richClickArgs = "args.ref = {}\nargs.selector = {}\nargs.button = {}\nargs.click_count = {}\nargs.modifiers = {}\n"

// richClick declares click with its opt-in arguments.
const richClick = "[browser.commands.click]\n" + richClickArgs

// richInputManifest is inputManifest with click's opt-in arguments
// declared, and extra appended.
func richInputManifest(extra string) string {
	return strings.Replace(inputManifest(), "[browser.commands.click]\n", richClick, 1) + extra
}

// TestClickButtonsCountsAndModifiers: a double click reaches the page as
// two clicks and a dblclick, a right click as the contextmenu event (and
// auxclick, as every button but the left one), a middle click as
// auxclick, modifiers as the event's keys. A click that would open a
// link or a form in a new tab or window (Control, Meta or Shift held, or
// the middle button) is refused, and one the page turns into a link's
// click as it acts opens nothing; a click that may open a tab is refused
// while a secret typed on the site may be in the page. The canary sees
// nothing.
func TestClickButtonsCountsAndModifiers(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest(`[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
fields = "text"
`))
	site, log := serveLogged(t, map[string]string{
		"/clicks": fmt.Sprintf(`<title>clicks</title>
<button id=b>B</button>
<p id=log>log:</p>
<a id=l href="/next">next</a>
<form action="/next"><button id=send>send</button></form>
<form id=f2 action="/elsewhere"></form>
<button id=wrap type=button onmouseup="this.setAttribute('form', 'f2'); this.type = 'submit'; this.id = 'wrapped'">wrap</button>
<a id=out href="%[1]s/collect">out</a>
<input id=pw aria-label=Password>
<script>
const b = document.getElementById('b'), say = s => document.getElementById('log').textContent += ' ' + s;
b.addEventListener('click', e => say('click' + e.detail + (e.ctrlKey ? '+ctrl' : '') + (e.shiftKey ? '+shift' : '') + (e.altKey ? '+alt' : '')));
b.addEventListener('dblclick', () => say('dbl'));
b.addEventListener('contextmenu', e => { e.preventDefault(); say('menu') });
b.addEventListener('auxclick', e => say('aux' + e.button));
</script>`, f.canaryTo),
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/clicks"})

	steps := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"selector": "#b", "click_count": 2}, "log: click1 click2 dbl"},
		{map[string]any{"selector": "#b", "button": "right"}, "dbl menu aux2"},
		{map[string]any{"selector": "#b", "button": "middle"}, "aux2 aux1"},
		{map[string]any{"selector": "#b", "modifiers": "Control+Shift"}, "aux1 click1+ctrl+shift"},
		{map[string]any{"selector": "#b", "modifiers": "Alt", "click_count": 3}, "click1+alt click2+alt dbl click3+alt"},
	}
	for _, s := range steps {
		out := f.mustAllow(t, "e2e.click", s.args)
		if snap := f.mustAllow(t, "e2e.snapshot", map[string]any{"selector": "#log"}); !strings.Contains(snap, s.want) {
			t.Errorf("click %v (%s): the page's log lacks %q:\n%s", s.args, out, s.want, snap)
		}
	}
	if out, _ := f.call(t, "e2e.click", map[string]any{"selector": "#b", "modifiers": "Hyper"}); !strings.Contains(out, "modifiers") {
		t.Errorf("a modifier that is none was not refused by name:\n%s", out)
	}

	// A click that would open a link or a form in a new tab or window
	// is refused, where it leads in scope or not: the browser opens such
	// a tab before the guard holds it. new_tab is the way.
	for _, args := range []map[string]any{
		{"selector": "#l", "modifiers": "Control"},
		{"selector": "#l", "button": "middle"},
		{"selector": "#l", "modifiers": "Shift"},
		{"selector": "#l", "modifiers": "Meta+Alt"},
		{"selector": "#out", "button": "middle"},
		{"selector": "#send", "modifiers": "Control"},
	} {
		f.mustRefuse(t, "e2e.click", args, "would open", "in a new tab or window", "new_tab")
	}
	// A button that the page makes a form's submit button as the mouse
	// button goes up (after the last check): the click was judged to lead
	// nowhere, and it opens nothing.
	for _, args := range []map[string]any{
		{"selector": "#wrap", "modifiers": "Control"},
		{"selector": "#wrap", "button": "middle"},
		{"selector": "#wrap", "modifiers": "Shift"},
	} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/clicks"})
		f.mustAllow(t, "e2e.click", args)
		f.mustAllow(t, "e2e.wait_for", map[string]any{"selector": "#wrapped", "timeout_ms": 500})
	}
	if tabs := f.mustAllow(t, "e2e.list_tabs", nil); strings.Contains(tabs, "t2") || log.count("/elsewhere") != 0 || log.count("/next") != 0 {
		t.Errorf("a modified click opened a tab (/elsewhere hit %d times, /next %d):\n%s", log.count("/elsewhere"), log.count("/next"), tabs)
	}

	// With a secret typed on the page, a click that may open a tab is
	// refused; a plain one is not.
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#l", "modifiers": "Meta"}, "a secret was typed on this site")
	f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#l", "button": "middle"}, "a secret was typed on this site")
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b", "click_count": 2})

	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
	f.cs.Close()
	var clicks, secretTab int
	for _, e := range readEnvelopes(t, f.evidence) {
		if e.Command != "click" {
			continue
		}
		clicks++
		if !e.Decision.Allowed && e.Decision.Stage == evidence.StageSecrets {
			secretTab++
		}
	}
	if secretTab != 2 {
		t.Errorf("evidence holds %d click records refused for the secret, want 2 (of %d clicks)", secretTab, clicks)
	}
}

// dragPages are the pages the drag tests use: an HTML drag and drop (a
// card dropped in a bin gets the card's drag data), a pointer-based
// sortable list, a drop zone inside a form whose drop handler submits
// it (to the site, and to the canary), and one outside any form whose
// drop handler submits another form.
func dragPages(canary string) map[string]string {
	card := `<div id=card draggable=true ondragstart="event.dataTransfer.setData('text/plain', 'card-1')" style="width:80px;height:40px;background:#ddd">Card</div>`
	zone := func(id, drop string) string {
		return fmt.Sprintf(`<div id=%s ondragover="event.preventDefault()" ondrop="event.preventDefault(); %s" style="width:200px;height:80px;background:#eef">Drop here</div>`, id, drop)
	}
	return map[string]string{
		"/dnd": `<title>dnd</title>` + card + zone("bin", "document.getElementById('log').textContent += ' dropped ' + event.dataTransfer.getData('text/plain')") + `<p id=log>log:</p>`,
		"/sortable": `<title>sortable</title><ul style="list-style:none"><li id=a style="height:40px"><button>alpha</button></li><li id=b style="height:40px"><button>beta</button></li><li id=c style="height:40px"><button>gamma</button></li></ul><p id=order>order: alpha,beta,gamma</p>
<script>
let dragging = null, moves = 0;
for (const li of document.querySelectorAll('li')) li.addEventListener('pointerdown', () => { dragging = li; moves = 0 });
document.addEventListener('pointermove', e => { if (dragging && e.buttons === 1) moves++ });
document.addEventListener('pointerup', e => {
  if (!dragging || moves === 0) { dragging = null; return }
  const over = document.elementFromPoint(e.clientX, e.clientY)?.closest('li');
  if (over && over !== dragging) over.after(dragging);
  document.getElementById('order').textContent = 'order: ' + [...document.querySelectorAll('li')].map(l => l.textContent).join(',');
  dragging = null;
});
</script>`,
		"/dropform":   `<title>dropform</title>` + card + `<form action="/sent" method=post><input name=q value=dropped>` + zone("zone", "this.closest('form').submit()") + `</form>`,
		"/dropcanary": `<title>dropcanary</title>` + card + `<form action="` + canary + `/collect" method=post><input name=q value=dropped>` + zone("zone", "this.closest('form').submit()") + `</form>`,
		"/dropother":  `<title>dropother</title>` + card + zone("zone", "document.forms[0].submit()") + `<form action="/sent" method=post><input name=q value=dropped></form>`,
	}
}

// TestDragAndDrop: drag carries an HTML drag (the drop gets the drag's
// data) and a pointer drag (a sortable list reorders), from refs or
// selectors. A drop into a form is judged as that form's submission: to
// the canary it is refused before anything is pressed, to the site it is
// allowed and counted as a submission, and without submit_form declared
// it is refused. A drop outside any form whose handler submits a form is
// stopped at the request: the site sees no submission it did not judge.
func TestDragAndDrop(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest("[browser.commands.drag]\n[browser.commands.extract_html]\n"))
	site, log := serveLogged(t, dragPages(f.canaryTo))

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/dnd"})
	if out := f.mustAllow(t, "e2e.drag", map[string]any{"from": "#card", "to": "#bin"}); !strings.Contains(out, "with HTML drag and drop") {
		t.Errorf("the drag was not carried as an HTML drag:\n%s", out)
	}
	if out := f.mustAllow(t, "e2e.extract_html", map[string]any{"selector": "#log"}); !strings.Contains(out, "log: dropped card-1") {
		t.Errorf("the HTML drop did not get the card's drag data:\n%s", out)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/sortable"})
	alpha := findRef(f.mustAllow(t, "e2e.snapshot", nil), "alpha")
	if alpha == "" {
		t.Fatal("the snapshot has no ref for alpha")
	}
	out := f.mustAllow(t, "e2e.drag", map[string]any{"from": alpha, "to": "#c"})
	if order := f.mustAllow(t, "e2e.extract_html", map[string]any{"selector": "#order"}); !strings.Contains(order, "order: beta,gamma,alpha") {
		t.Errorf("the sortable list did not reorder (%s):\n%s", out, order)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/dropcanary"})
	f.mustRefuse(t, "e2e.drag", map[string]any{"from": "#card", "to": "#zone"}, "leads to "+f.canaryTo+"/collect")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/dropform"})
	if out := f.mustAllow(t, "e2e.drag", map[string]any{"from": "#card", "to": "#zone"}); log.count("/sent") != 1 {
		t.Errorf("the drop into the form did not submit it (/sent hit %d times):\n%s", log.count("/sent"), out)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/dropother"})
	f.mustRefuse(t, "e2e.drag", map[string]any{"from": "#card", "to": "#zone"}, "/sent")
	if n := log.count("/sent"); n != 1 {
		t.Errorf("a drop outside the form submitted it (/sent hit %d times)", n)
	}
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}

	// Without submit_form, a drop into a form is refused as a submission.
	g := startWith(t, strings.Replace(richInputManifest("[browser.commands.drag]\n[browser.commands.extract_html]\n"), "[browser.commands.submit_form]\n", "", 1))
	g.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/dropform"})
	g.mustRefuse(t, "e2e.drag", map[string]any{"from": "#card", "to": "#zone"}, "would submit a form", "submit_form")
	if n := log.count("/sent"); n != 1 {
		t.Errorf("a drop submitted a form without submit_form declared (/sent hit %d times)", n)
	}
}

// serveUploads serves /form, a form of the inputs given and a Send
// button that posts to /upload, and returns the site and what /upload
// received of each file sent as doc, by its name.
func serveUploads(t *testing.T, inputs string) (string, func(name string) string) {
	t.Helper()
	var mu sync.Mutex
	received := map[string]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>upload</title><form action="/upload" method=post enctype="multipart/form-data">%s<button>Send</button></form>`, inputs)
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err == nil {
			for _, hdr := range r.MultipartForm.File["doc"] {
				file, _ := hdr.Open()
				b, _ := io.ReadAll(file)
				mu.Lock()
				received[hdr.Filename] = string(b)
				mu.Unlock()
			}
		}
		fmt.Fprint(w, "<title>sent</title>sent")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site, func(name string) string {
		mu.Lock()
		defer mu.Unlock()
		return received[name]
	}
}

// TestUploadSeveralFiles: upload_file with files attaches several files
// of the upload directory to a multiple file input after a human
// approves them all (each digest shown), and the site receives each
// one's bytes; the reply and the evidence carry every file's name, size
// and SHA-256. A list to an input without multiple, a list with one file
// outside the directory, and file with files are refused before anyone
// is asked, and nothing of the other files is left.
func TestUploadSeveralFiles(t *testing.T) {
	t.Parallel()
	up := t.TempDir()
	contents := map[string]string{"a.txt": "first file\n", "b.csv": "region,total\nnorth,42\n"}
	for name, c := range contents {
		testkit.WriteFile(t, up, name, c)
	}
	f := startWith(t, inputManifest()+fmt.Sprintf(`[browser.commands.upload_file]
args.selector = {}
args.file = {}
args.files = { max_items = 3 }
[browser.files]
upload_dir = %q
`, up))
	site, received := serveUploads(t, `<input type=file id=many name=doc multiple aria-label=Documents><input type=file id=one name=single aria-label=Document>`)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	two := []any{"a.txt", "b.csv"}
	f.mustRefuse(t, "e2e.upload_file", map[string]any{"selector": "#one", "files": two}, "has no multiple attribute")
	f.mustRefuse(t, "e2e.upload_file", map[string]any{"selector": "#many", "files": []any{"a.txt", "../x"}}, "not a file inside the upload directory")
	f.mustRefuse(t, "e2e.upload_file", map[string]any{"selector": "#many", "files": two, "file": "a.txt"}, "exactly one of file, files")
	f.mustRefuse(t, "e2e.upload_file", map[string]any{"selector": "#many", "files": []any{"a.txt", "a.txt", "a.txt", "b.csv"}}, "max 3")
	copies, _ := filepath.Glob(filepath.Join(os.TempDir(), "browsergate-files-*", "up-*", "a.txt"))
	if len(copies) != 0 {
		t.Errorf("refused uploads left copies behind: %v", copies)
	}

	h := f.callAsync(t, "e2e.upload_file", map[string]any{"selector": "#many", "files": two})
	id := f.pendingID(t, h)
	list, _ := f.approvals(t, "list")
	var sums []string
	for _, name := range []string{"a.txt", "b.csv"} {
		sum := sha256.Sum256([]byte(contents[name]))
		sums = append(sums, hex.EncodeToString(sum[:]))
		if !strings.Contains(list, sums[len(sums)-1]) {
			t.Errorf("approvals list does not show %s's digest:\n%s", name, list)
		}
	}
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	out, refused := h.wait(t)
	if refused || !strings.Contains(out, "attached a.txt (11 bytes, sha256 "+sums[0]+") and b.csv") {
		t.Fatalf("upload_file with files:\n%s", out)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "button"})
	for name, c := range contents {
		if got := received(name); got != c {
			t.Errorf("the site received %q for %s, want the file's bytes", got, name)
		}
	}
	f.cs.Close()
	var names []string
	for _, e := range readEnvelopes(t, f.evidence) {
		for _, fr := range e.Files {
			names = append(names, fr.Name)
			if fr.Direction != "upload" || fr.Size != int64(len(contents[fr.Name])) {
				t.Errorf("evidence file = %+v", fr)
			}
		}
	}
	if strings.Join(names, ",") != "a.txt,b.csv" {
		t.Errorf("the evidence records files %v, want a.txt and b.csv", names)
	}
}

// TestFillForm: fill_form types into several fields in one call, each as
// type_text would: a secret goes into a password field of a page on its
// domains. A batch with one field type_text would refuse (a secret into a
// text field, a secret off its domains, a field that is not there) is
// refused whole, before any field is filled. A password typed into a
// password field is kept out of the evidence; the other fields' text is
// recorded.
func TestFillForm(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest(`[browser.commands.fill_form]
[browser.commands.extract_html]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
[secrets.OTHER_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["login.example.com"]
`))
	site, _ := serveLogged(t, map[string]string{
		"/login": `<title>login</title><form action="/in" method=post>
<input id=user name=user aria-label=User><input id=pw name=pw type=password aria-label=Password><input id=note name=note aria-label=Note></form>
<p id=seen>seen</p>
<script>for (const i of document.querySelectorAll('input')) i.addEventListener('input', () => {
  document.getElementById('seen').textContent = 'user=' + user.value + ' pw=' + pw.value.length + ' note=' + note.value;
})</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	user := findRef(snap, "User")
	if user == "" {
		t.Fatalf("no ref for the User field:\n%s", snap)
	}
	field := func(sel, text string) map[string]any {
		if sel == user {
			return map[string]any{"ref": sel, "text": text}
		}
		return map[string]any{"selector": sel, "text": text}
	}
	seen := func() string {
		return f.mustAllow(t, "e2e.extract_html", map[string]any{"selector": "#seen"})
	}
	out := f.mustAllow(t, "e2e.fill_form", map[string]any{"fields": []any{field(user, "ada"), field("#pw", "<APP_PASSWORD>"), field("#note", "hi")}})
	want := fmt.Sprintf("user=ada pw=%d note=hi", len(secretValue))
	if s := seen(); !strings.Contains(s, want) || !strings.Contains(out, "filled 3 fields") || !strings.Contains(out, "secret APP_PASSWORD") || strings.Contains(out, secretValue) {
		t.Errorf("fill_form (%s): the page saw %s, want %q", out, s, want)
	}

	for _, c := range []struct {
		name   string
		fields []any
		want   string
	}{
		{"a secret into a text field", []any{field("#note", "second"), field(user, "<APP_PASSWORD>")}, "field 2:"},
		{"a secret off its domains", []any{field(user, "bob"), field("#pw", "<OTHER_PASSWORD>")}, "field 2:"},
		{"a field that is not there", []any{field(user, "bob"), field("#missing", "x")}, "field 2:"},
	} {
		f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": c.fields}, c.want)
		if s := seen(); !strings.Contains(s, want) {
			t.Errorf("%s: a refused batch filled a field: the page saw %s", c.name, s)
		}
	}

	const typed = "plain-typed-Passw0rd"
	f.mustAllow(t, "e2e.fill_form", map[string]any{"fields": []any{field(user, "dave"), field("#pw", typed)}})
	if s := seen(); !strings.Contains(s, fmt.Sprintf("user=dave pw=%d", len(typed))) {
		t.Errorf("fill_form with a typed password: the page saw %s", s)
	}
	f.cs.Close()
	var fills int
	for _, e := range readEnvelopes(t, f.evidence) {
		if e.Command != "fill_form" {
			continue
		}
		fills++
		rec := fmt.Sprint(e.Args)
		if strings.Contains(rec, typed) || strings.Contains(rec, secretValue) {
			t.Errorf("the evidence holds a password: %s", rec)
		}
		if e.Decision.Allowed && !strings.Contains(rec, "ada") && !strings.Contains(rec, "dave") {
			t.Errorf("the evidence lacks a field's text: %s", rec)
		}
	}
	if fills != 5 {
		t.Errorf("the evidence holds %d fill_form records, want 5", fills)
	}
}

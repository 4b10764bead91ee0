package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// The command-surface suite: every command of the browser engine, each
// doing its work on pages of the suite's own site, through the real
// binary and the real MCP client. It runs unchanged on a launched browser,
// on the user's browser (live), on a pool host's browser and on a
// Selenium Grid's, so that a browser elsewhere is shown to do everything a
// local one does. It fails when a built-in command of the browser engine
// is not in it.

// surfaceCommands declares every command of the browser engine, with the
// upload and download directories the file commands need.
func surfaceCommands(up, down string) string {
	var b strings.Builder
	for _, name := range toolclad.BuiltinCommands() {
		if toolclad.IsHTTPCommand(name) {
			continue
		}
		fmt.Fprintf(&b, "[browser.commands.%s]\n%s", name, surfaceArgs[name])
	}
	fmt.Fprintf(&b, "\n[browser.files]\nupload_dir = %q\ndownload_dir = %q\nstate_dir = %q\n", up, down, surfaceStateDir(up))
	return b.String()
}

// surfaceURL declares a url argument of http pages (the suite's site).
const surfaceURL = `args.url = { type = "url", schemes = ["http"], scope_check = true }` + "\n"

// surfaceArgs are the args the suite declares for a command, one per line:
// the url arguments narrowed to http, and every opt-in argument (which a
// command declared without args lacks) with the command's other arguments.
var surfaceArgs = map[string]string{
	"navigate":   surfaceURL,
	"new_tab":    surfaceURL,
	"download":   surfaceURL,
	"screenshot": "args.full_page = {}\nargs.ref = {}\nargs.selector = {}\nargs.format = {}\nargs.quality = {}\nargs.scale = {}\n",
	"execute_js": "args.expression = {}\nargs.ref = {}\nargs.frame = {}\n",
	"wait_for":   "args.selector = {}\nargs.text = {}\nargs.role = {}\nargs.name = {}\nargs.timeout_ms = {}\nargs.text_gone = {}\nargs.time_ms = {}\n",
	// runNetwork checks that Set-Cookie is shown and Authorization is not.
	"network_request": `reveal_headers = ["set-cookie"]` + "\n",
	// performance_trace's reload is opt-in.
	"performance_trace": "args.duration_ms = {}\nargs.reload = {}\n",
	"click":             richClickArgs,
	"upload_file":       "args.ref = {}\nargs.selector = {}\nargs.file = {}\nargs.files = {}\n",
}

// surfaceManifest is e2eManifest (tool "e2e", the site on 127.0.0.1 in
// scope) for a launched browser or, with connect = "live", the user's at
// endpoint, with every command of the browser engine.
func surfaceManifest(t *testing.T, connect, endpoint, up, down string) string {
	t.Helper()
	live := ""
	if endpoint != "" {
		live = fmt.Sprintf("live_endpoint = %q", endpoint)
	}
	head, _, ok := strings.Cut(fmt.Sprintf(e2eManifest, connect, live), "[browser.commands.")
	if !ok {
		t.Fatal("e2eManifest has no commands to replace")
	}
	return head + surfaceCommands(up, down)
}

// surfaceUpload is the file the suite uploads.
const surfaceUpload = "quarterly numbers: 42\n"

// surfaceCSV is the file the suite downloads.
const surfaceCSV = "region,total\nnorth,42\n"

// surfaceSite is the suite's site: a page with a field, a select, a menu
// that opens on hover, a key log, a button that changes the page, a
// dialog, text that appears later, a tall body to scroll and a form with a
// file input that posts to /sent, which shows what it received; and a
// page that asks for permissions (surfacePermissionsPage).
func surfaceSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Surface</title>
<h1>Surface page</h1>
<form id=f action="/sent" method=post enctype="multipart/form-data">
<input id=q name=q aria-label=Name>
<input type=file id=doc name=doc aria-label=Document>
<button>Send</button></form>
<select id=size aria-label=Size onchange="document.getElementById('chosen').textContent = 'chose ' + this.value">
<option value=S>Small</option><option value=M>Medium</option></select><p id=chosen>chose nothing</p>
<div id=menu onmouseenter="document.getElementById('item').hidden = false">Menu</div><p id=item hidden>Hovered item</p>
<input id=k aria-label=Keys><p id=keys>keys:</p>
<button id=change onclick="document.getElementById('status').textContent = 'status: changed'">Change</button><p id=status>status: as loaded</p>
<button id=ask onclick="document.getElementById('answer').textContent = 'answer: ' + confirm('Proceed?')">Ask</button><p id=answer>answer: none</p>
<p id=later></p>
<div style="height: 3000px"></div><p>The bottom line.</p>
<script>
document.getElementById('k').addEventListener('keydown', e => { document.getElementById('keys').textContent += ' ' + e.key });
setTimeout(() => { document.getElementById('later').textContent = 'ready later' }, 300);
console.log('surface console line');
</script>`)
	})
	mux.HandleFunc("/sent", func(w http.ResponseWriter, r *http.Request) {
		q, got := r.PostFormValue("q"), "no file"
		if file, hdr, err := r.FormFile("doc"); err == nil {
			b, _ := io.ReadAll(file)
			sum := sha256.Sum256(b)
			got = fmt.Sprintf("file %s sha256 %s", hdr.Filename, hex.EncodeToString(sum[:]))
		}
		fmt.Fprintf(w, "<!doctype html><title>Sent</title><p id=got>sent q=%s, %s</p>", q, got)
	})
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Second</title><p>The second page.</p>`)
	})
	mux.HandleFunc("/permissions", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, surfacePermissionsPage)
	})
	mux.HandleFunc("/capture/", surfaceCapturePages)
	mux.Handle("/network/", networkSite())
	mux.HandleFunc("/insight", surfaceInsightPage)
	surfaceInput(mux)
	surfaceStatePages(mux)
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		fmt.Fprint(w, surfaceCSV)
	})
	emulationPages(mux)
	return mux
}

// surfacePermissionsPage asks for geolocation, notifications and the
// clipboard as it loads and writes, for each, the state the Permissions
// API reports and whether the request got anything ("refused" or "got").
// A clipboard read is refused for a permission, or on a browser elsewhere
// because its page does not have the focus: either way nothing is read.
const surfacePermissionsPage = `<!doctype html><title>permissions</title><pre id=out>asking</pre><script>
(async () => {
  const state = async n => { try { return (await navigator.permissions.query({name: n})).state; } catch (e) { return 'error'; } };
  const geo = await new Promise(r => navigator.geolocation.getCurrentPosition(() => r('got'), () => r('refused'), {timeout: 300}));
  let notif;
  try { notif = (await Notification.requestPermission()) === 'granted' ? 'got' : 'refused'; } catch (e) { notif = 'refused'; }
  let clip;
  try { await navigator.clipboard.readText(); clip = 'got'; } catch (e) { clip = 'refused'; }
  document.getElementById('out').textContent = 'geolocation=' + await state('geolocation') + '/' + geo +
    ' notifications=' + await state('notifications') + '/' + notif + ' clipboard-read=' + await state('clipboard-read') + '/' + clip + ' asked';
})();
</script>`

// surfaceDirs makes the upload directory, with the file to upload, and the
// download directory.
func surfaceDirs(t *testing.T) (up, down string) {
	t.Helper()
	dir := t.TempDir()
	up, down = filepath.Join(dir, "up"), filepath.Join(dir, "down")
	for _, d := range []string{up, down} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WriteFile(t, up, "report.txt", surfaceUpload)
	if err := os.Mkdir(surfaceStateDir(up), 0o700); err != nil {
		t.Fatal(err)
	}
	return up, down
}

// surface runs the suite against a started fixture.
type surface struct {
	f       *fixture
	tool    string // the manifest's tool name
	site    string // the suite's site, as the browser reaches it
	down    string // the download directory
	live    bool   // the user's browser (live mode)
	remote  bool   // a remote browser (pool host, Selenium Grid, browserless)
	covered map[string]bool
}

func (s *surface) allow(t *testing.T, cmd string, args map[string]any, wants ...string) string {
	t.Helper()
	s.covered[cmd] = true
	out := s.f.mustAllow(t, s.tool+"."+cmd, args)
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s %v: the reply lacks %q:\n%s", cmd, args, w, out)
		}
	}
	return out
}

// approved calls cmd, which the shipped policies hold for a human, and
// approves (or answers) it as the operator does, with the approvals CLI.
func (s *surface) approved(t *testing.T, cmd string, args map[string]any, answer string) string {
	t.Helper()
	s.covered[cmd] = true
	h := s.f.callAsync(t, s.tool+"."+cmd, args)
	id := s.f.pendingID(t, h)
	verb := []string{"approve", id, "--by", "alice"}
	if answer != "" {
		verb = []string{"answer", id, answer, "--by", "alice"}
	}
	if out, err := s.f.approvals(t, verb...); err != nil {
		t.Fatalf("approvals %s: %v\n%s", verb[0], err, out)
	}
	out, refused := h.wait(t)
	if refused {
		t.Fatalf("%s %v refused after the operator's %s:\n%s", cmd, args, verb[0], out)
	}
	return out
}

// run drives every command of the browser engine. Each step asserts what
// the command did to the page or what it gave back.
func (s *surface) run(t *testing.T) {
	s.covered = map[string]bool{}
	form := s.site + "/form"
	s.allow(t, "navigate", map[string]any{"url": form}, `title="Surface"`)
	snap := s.allow(t, "snapshot", nil, "Surface page")
	name := findRef(snap, "Name")
	if name == "" {
		t.Fatalf("the snapshot has no ref for the Name field:\n%s", snap)
	}
	s.allow(t, "type_text", map[string]any{"ref": name, "text": "Ada"})
	s.allow(t, "select_option", map[string]any{"selector": "#size", "label": "Medium"})
	s.allow(t, "hover", map[string]any{"selector": "#menu"})
	s.allow(t, "press_key", map[string]any{"key": "x", "selector": "#k"})
	s.allow(t, "click", map[string]any{"selector": "#change"})
	s.allow(t, "wait_for", map[string]any{"text": "ready later", "timeout_ms": 10000})
	snap = s.allow(t, "snapshot", nil, `value="Ada"`, "chose M", "Hovered item", "keys: x", "status: changed", "ready later")
	if t.Failed() {
		t.Logf("the page after the input commands:\n%s", snap)
	}
	s.allow(t, "scroll", map[string]any{"direction": "down"})
	s.allow(t, "extract_html", map[string]any{"selector": "#status"}, "status: changed")
	s.allow(t, "read", nil, "Surface page", "The bottom line.")
	s.covered["screenshot"] = true
	res := s.f.callResult(t, s.tool+".screenshot", nil)
	if res.IsError || !hasImage(res, "image/png") {
		t.Errorf("screenshot gave no PNG:\n%s", resultText(res))
	}
	s.allow(t, "console_messages", nil, "surface console line")
	s.allow(t, "network_log", nil, "/form")
	s.allow(t, "network_timing", nil)
	if out := s.approved(t, "execute_js", map[string]any{"expression": "document.title + ' scrolled ' + (window.scrollY > 0)"}, ""); !strings.Contains(out, "Surface scrolled true") {
		t.Errorf("execute_js after scroll:\n%s", out)
	}

	s.allow(t, "click", map[string]any{"selector": "#ask"}, "Proceed?")
	s.allow(t, "handle_dialog", map[string]any{"accept": true})
	s.allow(t, "extract_html", map[string]any{"selector": "#answer"}, "answer: true")

	// No permission is granted to a page without the manifest's say, on
	// whatever browser: each is denied, and its request gets nothing.
	s.allow(t, "navigate", map[string]any{"url": s.site + "/permissions"})
	s.allow(t, "wait_for", map[string]any{"text": " asked", "timeout_ms": 10000})
	s.allow(t, "snapshot", nil, "geolocation=denied/refused notifications=denied/refused clipboard-read=denied/refused asked")
	s.allow(t, "navigate", map[string]any{"url": form})
	s.allow(t, "type_text", map[string]any{"selector": "#q", "text": "Ada"})

	sum := sha256.Sum256([]byte(surfaceUpload))
	digest := hex.EncodeToString(sum[:])
	if out := s.approved(t, "upload_file", map[string]any{"selector": "#doc", "file": "report.txt"}, ""); !strings.Contains(out, "attached report.txt") {
		t.Errorf("upload_file:\n%s", out)
	}
	s.allow(t, "submit_form", map[string]any{"selector": "#f"}, `title="Sent"`)
	s.allow(t, "snapshot", nil, "sent q=Ada, file report.txt sha256 "+digest)

	second := s.site + "/second"
	s.allow(t, "navigate", map[string]any{"url": second}, `title="Second"`)
	s.allow(t, "go_back", nil, `title="Sent"`)
	s.allow(t, "go_forward", nil, `title="Second"`)
	s.allow(t, "reload", nil, `title="Second"`)

	s.allow(t, "new_tab", map[string]any{"url": form}, `title="Surface"`)
	if tabs := s.sessionTabs(t); len(tabs) != 2 {
		t.Errorf("list_tabs after new_tab: %+v, want the session's two tabs", tabs)
	}
	first, opened := s.f.tabID(t, s.tool, "session", "/second"), s.f.tabID(t, s.tool, "session", "/form")
	s.allow(t, "switch_tab", map[string]any{"tab": first}, `title="Second"`)
	s.allow(t, "close_tab", map[string]any{"tab": opened})
	if tabs := s.sessionTabs(t); len(tabs) != 1 || tabs[0].Tab != first {
		t.Errorf("list_tabs after close_tab: %+v, want the first tab alone", tabs)
	}

	s.allow(t, "download", map[string]any{"url": s.site + "/report.csv"}, "report.csv")
	if b, err := os.ReadFile(filepath.Join(s.down, "report.csv")); err != nil || string(b) != surfaceCSV {
		t.Errorf("the download directory's report.csv: %q, %v; want the site's file", b, err)
	}

	if out := s.approved(t, "await_human", map[string]any{"question": "Which region?"}, "the north"); !strings.Contains(out, "the north") {
		t.Errorf("await_human did not give the operator's answer:\n%s", out)
	}

	s.runCapture(t)
	s.runNetwork(t)
	s.runInsight(t)
	s.runInput(t)
	s.runEmulate(t)
	s.runState(t)

	for _, name := range toolclad.BuiltinCommands() {
		if !toolclad.IsHTTPCommand(name) && !s.covered[name] {
			t.Errorf("the command-surface suite does not run %s", name)
		}
	}
	if !s.f.net.Clean() {
		t.Errorf("the canary saw: %s", s.f.net)
	}
}

// sessionTabs calls list_tabs and returns the session's own tabs (a live
// session also lists the user's tabs of the scope).
func (s *surface) sessionTabs(t *testing.T) []listedTab {
	t.Helper()
	s.covered["list_tabs"] = true
	tabs, _ := s.f.tabs(t, s.tool)
	return slices.DeleteFunc(tabs, func(tb listedTab) bool { return tb.Owner != "session" })
}

// hasImage reports whether a result carries an image of the MIME type.
func hasImage(res *mcp.CallToolResult, mime string) bool {
	return slices.ContainsFunc(res.Content, func(c mcp.Content) bool {
		img, ok := c.(*mcp.ImageContent)
		return ok && img.MIMEType == mime && len(img.Data) > 0
	})
}

// TestCommandSurfaceOnALaunchedBrowser runs the command-surface suite on
// the browser the daemon launches.
func TestCommandSurfaceOnALaunchedBrowser(t *testing.T) {
	t.Parallel()
	up, down := surfaceDirs(t)
	f := startWith(t, surfaceManifest(t, "launch", "", up, down))
	site, stop, err := serveOn("127.0.0.1:0", surfaceSite())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	(&surface{f: f, tool: "e2e", site: site, down: down}).run(t)
}

// TestCommandSurfaceInTheUsersBrowser runs the command-surface suite in a
// live session, in a Chromium of the user's.
func TestCommandSurfaceInTheUsersBrowser(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	up, down := surfaceDirs(t)
	f := startWith(t, surfaceManifest(t, "live", fmt.Sprintf("http://127.0.0.1:%d", port), up, down))
	site, stop, err := serveOn("127.0.0.1:0", surfaceSite())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	(&surface{f: f, tool: "e2e", site: site, down: down, live: true}).run(t)
}

// surfaceInLab serves the suite's site on the lab's web host and returns
// the manifest with the suite's commands in place of the egress suite's.
func surfaceInLab(t *testing.T, r *remoteLab, manifest, up, down string) (body, site string) {
	t.Helper()
	if !strings.Contains(manifest, labCommands) {
		t.Fatal("the lab manifest does not end with labCommands")
	}
	site = serveIn(t, r.w, "10.77.3.2:8081", surfaceSite())
	return strings.Replace(manifest, labCommands, surfaceCommands(up, down), 1), site
}

// TestCommandSurfaceOnAPoolHost runs the command-surface suite on a pool
// host's browser (provider cdp-url), every request through the daemon's
// gate; the upload's file crosses to the pool host over DevTools.
func TestCommandSurfaceOnAPoolHost(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	up, down := surfaceDirs(t)
	body, site := surfaceInLab(t, r, fmt.Sprintf(remoteManifest, r.devtools), up, down)
	f := remoteFixtureWith(t, r, body)
	(&surface{f: f.fixture, tool: "egress", site: site, down: down, remote: true}).run(t)
}

// TestCommandSurfaceOnTheGrid runs the command-surface suite on a browser
// of a Selenium Grid's (provider selenium).
func TestCommandSurfaceOnTheGrid(t *testing.T) {
	t.Parallel()
	r := newLabHosts(t)
	g := startGrid(t, r)
	up, down := surfaceDirs(t)
	body, site := surfaceInLab(t, r, ownBrowserManifest("selenium", "egress", g.url, g.creds, ""), up, down)
	f := remoteFixtureWith(t, r, body)
	(&surface{f: f.fixture, tool: "egress", site: site, down: down, remote: true}).run(t)
}

// TestCommandSurfaceOnBrowserless runs the command-surface suite on a
// browser browserless launches for the session (provider browserless).
func TestCommandSurfaceOnBrowserless(t *testing.T) {
	t.Parallel()
	r := newLabHosts(t)
	bl := startBrowserless(t, r, "0")
	up, down := surfaceDirs(t)
	body, site := surfaceInLab(t, r, ownBrowserManifest("browserless", "egress", bl.url, bl.creds, ""), up, down)
	f := remoteFixtureWith(t, r, body)
	(&surface{f: f.fixture, tool: "egress", site: site, down: down, remote: true}).run(t)
}

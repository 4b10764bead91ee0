package executor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/executor/snapshot/snapshottest"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

var updateCaptures = flag.Bool("update-captures", false,
	"TestSnapshotCaptures: take the captures package snapshot is tested on again, and write them and their goldens to "+capturesDir)

// capturesDir is where package snapshot keeps its saved captures.
var capturesDir = filepath.Join("snapshot", "testdata")

// snapshotPage has each construct the snapshot renders: one line per
// block, inline code kept in place, lists with their nesting and numbers,
// a table as rows with each cell's text once (one Chromium takes for
// layout as the blocks it lays out), a code block with its lines,
// controls with refs and states (their name left out where their label
// shows it; a select's options by their labels, wherever they are in it
// but for those of a select or datalist put in it, hidden ones left out,
// and which are selected in a list box, each once; an option outside a
// select by its label, unless hidden), links with refs and targets,
// hidden text left out, the main content first. Package snapshot's
// TestRenderFormat says what it renders to.
const snapshotPage = `<!doctype html><title>Reference</title>
<nav aria-label="Sidebar"><ul><li><a href="/intro">Intro</a></li><li><a href="/ref">Reference</a></li></ul></nav>
<main>
<h1>The <code>Client</code> type</h1>
<p>A <code>Client</code> sends <em>requests</em> to a <a href="/server">server</a>,
   and waits.</p>
<ul><li>one<ul><li>one.a</li></ul></li><li>two</li></ul>
<ol><li>first</li><li>second</li></ol>
<table><tr><th>Order</th><th>Total</th></tr><tr><td>A-1</td><td>12 <b>EUR</b></td></tr></table>
<table><tr><td><p>Left column</p><p>its second block</p></td><td></td><td>Right column</td></tr></table>
<pre><code>func main() {
	run()
}</code></pre>
<form aria-label="Settings"><label>Email <input name=e value="a@b.c"></label>
<label><input type=checkbox checked> Remember</label>
<select aria-label="Size"><option>S</option><option selected>M</option></select>
<select aria-label="Sizes" multiple><option label="Small">S</option><option selected>M</option><option hidden>Secret</option><optgroup label="Big"><option selected>L</option></optgroup></select>
<select aria-label="Colour" style="appearance:base-select"><div><option>Red</option></div><option selected>Blue</option><div hidden><option>Grey</option></div><optgroup label="Dark" hidden><option>Black</option></optgroup></select>
<select aria-label="Tags" multiple size=3 style="appearance:base-select"><option selected>new</option><option>old</option></select>
<button>Save</button></form>
<option>A stray option</option><option style="visibility:hidden">An unseen option</option>
<script>{const c = document.querySelector('[aria-label=Colour]'); const inner = document.createElement('select'); inner.innerHTML = '<option>Nested</option>';
const dl = document.createElement('datalist'); dl.innerHTML = '<option>Listed</option>'; c.append(inner, dl)}</script>
<p style="display:none">invisible</p><p style="visibility:hidden">unseen</p>
<img alt="A diagram"> <img alt="">
</main>
<footer>Footer text</footer>`

// passwordPage has password fields holding values of two lengths, one
// empty, and a text field beside them.
const passwordPage = `<!doctype html><title>Sign in</title><main><form aria-label="Sign in">
<label>User <input name=u value="alice"></label>
<label>Password <input type=password name=p value="correct horse battery staple"></label>
<label>PIN <input type=PASSWORD name=pin value="12"></label>
<label>New password <input type=password name=n></label>
<button>Sign in</button></form></main>`

// nestedTablesPage has a table inside a cell of another (two tables side
// by side in one row, as LWN lays out its statistics). Package snapshot's
// TestRenderNestedTables says what it renders to.
const nestedTablesPage = `<!doctype html><title>Stats</title><main>
<table>
<tr><th colspan=2>Most active developers</th></tr>
<tr><td><table><tr><th colspan=3>By changesets</th></tr><tr><td>Ada</td><td>63</td><td>16.6%</td></tr><tr><td>Bob</td><td>56</td><td>14.7%</td></tr></table></td>
<td><table><tr><th colspan=3>By changed lines</th></tr><tr><td>Bob</td><td>4554</td><td>88.1%</td></tr></table></td></tr>
<tr><td>Total</td><td>119 changesets</td></tr>
</table>
<table><tr><th>Plain</th><th>Row</th></tr><tr><td>x</td><td>y</td></tr></table>
</main>`

// capturedPage is a page TestSnapshotCaptures captures: the URL the tab
// navigates to, and what is done before (login: the demo site's session
// cookie is set first).
type capturedPage struct {
	name, url string
	login     bool
}

// captureSites serves the pages TestSnapshotCaptures captures and returns
// them, with each site's base URL and the fixed one that stands for it in
// the saved captures (their ports differ from one run to the next).
func captureSites(t *testing.T) (pages []capturedPage, bases map[string]string, demo string) {
	t.Helper()
	bases = map[string]string{}
	serve := func(addr, fixed string, h http.Handler) string {
		base := serveOn(t, addr, h)
		bases[base] = fixed
		return base
	}
	pageHandler := func(pages map[string]string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := pages[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, p)
		})
	}
	// Frames as TestFrames (cmd/browsergate) has them: a frame of the
	// same site; another site's, in a process of its own, below the fold;
	// and a frame of the tab's site inside a frame of another origin
	// (mid: the other site on another port) inside the other site's
	// frame.
	other := serve("127.0.0.3:0", "http://127.0.0.3:8003", pageHandler(map[string]string{
		"/x": `<title>x</title><p>another site</p><button>Press there</button><p id=o>idle there</p>
<input aria-label="There"> <a href="/y">Onward</a> <a href="http://127.0.0.2:9/oopif-link">Away</a>`,
	}))
	deepest := serve("127.0.0.1:0", "http://127.0.0.1:8004", pageHandler(map[string]string{
		"/inner": `<title>inner</title><button>Press deep</button>`,
	}))
	mid := serve("127.0.0.3:0", "http://127.0.0.3:8005", pageHandler(map[string]string{
		"/mid": `<title>mid</title><p>in the middle</p><iframe src="` + deepest + `/inner" width=500 height=200></iframe>`,
	}))
	holder := serve("127.0.0.3:0", "http://127.0.0.3:8006", pageHandler(map[string]string{
		"/holder": `<title>holder</title><iframe style="margin: 40px" src="` + mid + `/mid" width=550 height=250></iframe>`,
	}))
	spec, err := os.ReadFile(filepath.Join("..", "cmd", "peerbench", "testdata", "docs", "go-spec.html"))
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]string{
		"/format":        snapshotPage,
		"/nested-tables": nestedTablesPage,
		"/frames":        `<title>outer</title><h1>Outer</h1><iframe src="/inner" width=600 height=300></iframe>`,
		"/inner": `<title>inner</title><button>Press</button><p id=o>idle</p>
<input aria-label=Name><a href="/after">After</a>`,
		"/oopif":      `<title>other</title><div style="height:1500px">tall</div><iframe src="` + other + `/x" width=600 height=300></iframe>`,
		"/oopif-deep": `<title>deep</title><iframe src="` + holder + `/holder" width=650 height=350></iframe>`,
		// Password fields, filled with values of two lengths and empty:
		// package snapshot's TestRenderPasswordMask says what they render
		// to.
		"/password": passwordPage,
		// The Go specification as BenchmarkSnapshotLongPage serves it.
		"/go-spec": "<!doctype html><title>The Go Programming Language Specification</title>" + string(spec),
	}
	axPages := axReadPages(t)
	for _, name := range []string{"controls", "tables-more", "modal", "films"} {
		own["/"+name] = string(axPages[name])
	}
	site := serve("127.0.0.1:0", "http://127.0.0.1:8001", pageHandler(own))
	demo = serve("127.0.0.1:0", "http://127.0.0.1:8002", demosite.New(demosite.Options{ForbiddenURL: "http://127.0.0.2:9/canary"}))
	for _, name := range []string{"format", "nested-tables", "frames", "oopif", "oopif-deep", "controls", "tables-more", "modal", "films", "go-spec", "password"} {
		pages = append(pages, capturedPage{name: name, url: site + "/" + name})
	}
	pages = append(pages,
		capturedPage{name: "demo-home", url: demo + "/"},
		capturedPage{name: "demo-login", url: demo + "/login"},
		capturedPage{name: "demo-dashboard", url: demo + "/dashboard", login: true},
		capturedPage{name: "demo-docs", url: demo + "/docs"},
		capturedPage{name: "demo-elsewhere", url: demo + "/elsewhere"},
		capturedPage{name: "demo-trap-form", url: demo + "/trap/form"},
		capturedPage{name: "demo-trap-overlay", url: demo + "/trap/overlay"},
		// The echo page with another site's frame in it (the frame's URL
		// unescaped, so that its port is fixed in the page's URL too).
		capturedPage{name: "demo-echo-frame", url: demo + "/echo?frame=" + other + "/x"},
	)
	return pages, bases, demo
}

// TestSnapshotCaptures captures, in Chromium, the pages package snapshot
// is tested on (the demo site's, and the pages the executor's tests
// serve: forms and controls, tables, lists, frames of the same process
// and of others, a long page), and checks that each renders as its golden
// says: the saved captures cannot drift from what the browser reads. With
// -update-captures it writes the captures and their goldens instead.
// Every saved capture is one of its pages.
func TestSnapshotCaptures(t *testing.T) {
	t.Parallel()
	pages, bases, demo := captureSites(t)
	m := testkit.Manifest(t, `[tool]
name = "captures"
[browser]
max_interactions = 1000
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`)
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	navigate := func(t *testing.T, u string) {
		t.Helper()
		raw := map[string]any{"url": u}
		cmd := m.Command("navigate")
		args, err := cmd.Validate(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Run(context.Background(), &toolclad.Call{SessionID: "s", Manifest: m, Command: cmd, Tool: "captures.navigate", Args: args, RawArgs: raw}); r.IsError {
			t.Fatalf("navigate to %s: %s", u, r.Text)
		}
	}
	navigate(t, demo+"/")
	s, err := e.session(&toolclad.Call{SessionID: "s", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	// The dashboard's session: a sign-in of the demo site's, its cookie
	// set in the tab.
	cookie := demoSession(t, demo)
	if _, err := chromedp.Call(s.tab.ctx, network.SetCookie, network.SetCookieParams{Name: cookie.Name, Value: cookie.Value, URL: demo + "/"}); err != nil {
		t.Fatal(err)
	}
	fixed := fixedBases(bases)
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			navigate(t, p.url)
			s.mu.Lock()
			c, err := s.capture(s.tab.ctx, s.tab.ctx, "", 0)
			s.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			rewriteStrings(c, fixed)
			got, err := snapshottest.Golden(c)
			if err != nil {
				t.Fatal(err)
			}
			if *updateCaptures {
				if err := snapshottest.Write(capturesDir, p.name, c, got); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := snapshottest.ReadGolden(capturesDir, p.name)
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("no golden of %s in %s: take the captures with -update-captures", p.name, capturesDir)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := snapshottest.Diff(want, got); diff != "" {
				t.Errorf("%s renders otherwise than its golden (%s), which -update-captures takes again:\n%s", p.url, p.name+snapshottest.GoldenSuffix, diff)
			}
		})
	}
	if *updateCaptures {
		return
	}
	saved, err := snapshottest.Names(capturesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range saved {
		if !slices.ContainsFunc(pages, func(p capturedPage) bool { return p.name == name }) {
			t.Errorf("the capture %s saved in %s is of no page of this test", name, capturesDir)
		}
	}
}

// demoSession signs in to the demo site at base and returns its session
// cookie.
func demoSession(t *testing.T, base string) *http.Cookie {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(base+"/login", url.Values{"username": {"ada"}, "password": {"pw"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "session" {
			return c
		}
	}
	t.Fatal("the demo site's sign-in set no session cookie")
	return nil
}

// fixedBases replaces each base URL of bases (http://host:port) in a
// string with the fixed one it stands for, in one pass: a fixed URL is
// never replaced in turn.
func fixedBases(bases map[string]string) func(string) string {
	hosts := map[string]string{} // host:port -> fixed host:port
	var quoted []string
	for base, fixed := range bases {
		from, to := strings.TrimPrefix(base, "http://"), strings.TrimPrefix(fixed, "http://")
		hosts[from] = to
		quoted = append(quoted, regexp.QuoteMeta(from))
	}
	slices.Sort(quoted)
	// A port is never followed by another digit: 127.0.0.1:8080 is not
	// 127.0.0.1:808.
	re := regexp.MustCompile(`(` + strings.Join(quoted, "|") + `)([^0-9]|$)`)
	return func(s string) string {
		return re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			return hosts[sub[1]] + sub[2]
		})
	}
}

// rewriteStrings applies f to every string of c the renderer reads: the
// layout's strings, the tree's names, values and properties, and the URLs
// of frames, in c and in its out-of-process frames' captures.
func rewriteStrings(c *snapshot.Capture, f func(string) string) {
	c.URL = f(c.URL)
	if c.Layout != nil {
		for i, s := range c.Layout.Strings {
			c.Layout.Strings[i] = f(s)
		}
	}
	for _, n := range c.AX {
		n.Role, n.Name, n.Value = f(n.Role), f(n.Name), f(n.Value)
		for k, v := range n.Props {
			n.Props[k] = f(v)
		}
	}
	for _, fc := range c.Frames {
		rewriteStrings(fc, f)
	}
}

package executor

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/memory"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/examples/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// rebuildingPage is a page that, at each press of its button, replaces
// the part of the document the button is in: a wrapper of 1,000 spans
// (2,000 nodes with their text) and a new button, as a single-page app
// renders again.
func rebuildingPage(label, extra string) string {
	return fmt.Sprintf(`<!doctype html><div id=c></div>%s<script>
function build() {
  const w = document.createElement('div');
  for (let i = 0; i < 1000; i++) { const d = document.createElement('span'); d.textContent = i %% 10; w.appendChild(d); }
  const b = document.createElement('button'); b.textContent = %q; b.onclick = build; w.appendChild(b);
  const c = document.getElementById('c'); c.textContent = ''; c.appendChild(w);
}
build();
</script>`, extra, label)
}

// TestCallsReleaseTheirObjects: the elements a call resolves (in the tab
// and in a frame of another site, which runs in a process of its own) are
// released when it ends. A page that replaces the clicked element's part
// of the document at each click keeps, after the garbage is collected,
// about one copy of that part in each process, where an element held by
// each click kept every copy ever clicked (26,048 nodes in the tab and
// 26,047 in the frame after 12 clicks each, with the release taken out).
func TestCallsReleaseTheirObjects(t *testing.T) {
	t.Parallel()
	frameSite := serveOn(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, rebuildingPage("Inner", ""))
	}))
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, rebuildingPage("Press", `<iframe src="`+frameSite+`/" width=400 height=200></iframe>`))
	})
	m := testkit.Manifest(t, `[tool]
name = "objs"
[browser]
max_interactions = 1000
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.2"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.2/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
`)
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	run := func(command string, raw map[string]any) string {
		t.Helper()
		cmd := m.Command(command)
		args, err := cmd.Validate(raw)
		if err != nil {
			t.Fatal(err)
		}
		r := e.Run(context.Background(), &toolclad.Call{SessionID: "s", Manifest: m, Command: cmd, Tool: "objs." + command, Args: args, RawArgs: raw})
		if r.IsError {
			t.Fatalf("%s: %s", command, r.Text)
		}
		return r.Text
	}
	run("navigate", map[string]any{"url": site + "/"})
	const clicks = 12
	var frameRef string
	for range clicks {
		snap := run("snapshot", map[string]any{})
		refs := map[string]string{}
		for _, m := range regexp.MustCompile(`\[button "(Press|Inner)" (e\d+)`).FindAllStringSubmatch(snap, -1) {
			refs[m[1]] = m[2]
		}
		if refs["Press"] == "" || refs["Inner"] == "" {
			t.Fatalf("the buttons are not both in the snapshot:\n%s", snap)
		}
		frameRef = refs["Inner"]
		run("click", map[string]any{"ref": refs["Press"]})
		run("click", map[string]any{"ref": refs["Inner"]})
	}
	s, err := e.session(&toolclad.Call{SessionID: "s", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	oopif := s.tab.refs[frameRef].oopif
	if oopif == "" {
		t.Fatal("the frame of another site is not out of process: the test proves nothing about frames")
	}
	fctx, cancel, err := s.inFrame(s.tab.ctx, oopif)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	for _, where := range []struct {
		name string
		ctx  context.Context
	}{{"the tab", s.tab.ctx}, {"the frame of another site", fctx}} {
		if _, err := chromedp.Call(where.ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		c, err := chromedp.Call(where.ctx, memory.GetDOMCounters, cdp.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		// One copy is about 2,000 nodes; every copy clicked, 26,000.
		if c.Nodes > 6000 {
			t.Errorf("%s holds %d DOM nodes after %d clicks that each replaced 2,000: the clicked elements were kept", where.name, c.Nodes, clicks)
		}
		t.Logf("%s: %d nodes", where.name, c.Nodes)
	}
}

package executor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// maskSession is a session of a new executor on m (and the others).
func maskSession(t *testing.T, m *toolclad.Manifest, others ...*toolclad.Manifest) *session {
	t.Helper()
	e, err := New(Config{Manifests: append([]*toolclad.Manifest{m}, others...), Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	s, err := e.session(&toolclad.Call{SessionID: "mcp", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// moved is a finished call of command that found the tab on from and
// left it on to.
func moved(command, from, to string) *turn {
	return &turn{call: &toolclad.Call{Command: &toolclad.Command{Name: command}},
		facts: &facts{State: PageState{URL: "https://" + from + "/"}}, after: &PageState{URL: "https://" + to + "/"}}
}

// TestMaskerConsidersTheSecretsOfThePage: a text is masked for the agent
// for a secret only where the page could hold it — a page of the secret's
// domains, or, once the secret was typed, a page the tab reached from its
// site without an agent navigation in between. A page the tab reached
// otherwise gets nothing masked, so a page that prints candidate pieces
// learns nothing; the record masks every secret of the manifest.
func TestMaskerConsidersTheSecretsOfThePage(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	m := testkit.SecretManifest(t, value) // PW on login.example.com, *.auth.example.com
	pw := m.Secrets[0]
	masked := func(s *session, host string) bool {
		return s.agentMasker(host).Mask("x "+value[2:9]) != "x "+value[2:9]
	}
	t.Run("never typed", func(t *testing.T) {
		s := maskSession(t, m)
		for host, want := range map[string]bool{
			"login.example.com": true, "LOGIN.example.com.": true, "a.auth.example.com": true,
			"evil.example.com": false, "auth.example.com": false, "": false, "login.example.com.evil.test": false,
		} {
			if got := masked(s, host); got != want {
				t.Errorf("on %q: masked %v, want %v", host, got, want)
			}
		}
		// Not typed: a click from its site carries nothing.
		s.noteReach(moved("click", "login.example.com", "app.example.com"))
		if masked(s, "app.example.com") {
			t.Error("a secret never typed is masked on a page off its domains")
		}
		if got := s.masker.Load().Mask(value); got != "[secret PW]" {
			t.Errorf("the record's masker left %q", got)
		}
		// Page content a call reads is of the page it observed, even when
		// the guard saw no commit there (a tab switched to); until the
		// call is recorded.
		read := func() string { return s.masker.Load().Finish(s.maskText("x "+value), false) }
		s.egress.bound.Committed("evil.example.com")
		if got := read(); got != "x "+value {
			t.Errorf("read on a page off the secret's domains: %q", got)
		}
		s.observed("https://login.example.com/")
		if got := read(); got != "x [secret PW]" {
			t.Errorf("read on the observed page of the secret's site: %q", got)
		}
		s.noteReach(moved("snapshot", "login.example.com", "login.example.com"))
		if got := read(); got != "x "+value {
			t.Errorf("read on a page off the secret's domains once the call was recorded: %q", got)
		}
	})
	t.Run("typed", func(t *testing.T) {
		s := maskSession(t, m)
		s.egress.bound.Bind("login.example.com", []*toolclad.Secret{pw}, s.secrets.Load())
		s.noteReach(moved("type_text", "login.example.com", "login.example.com"))
		// A judged sign-in's click, which the server redirects to
		// app.example.com, carries it there; and on to a page app moves
		// to by itself between calls, and one a click there leads to.
		s.noteReach(moved("click", "login.example.com", "app.example.com"))
		s.noteReach(moved("snapshot", "next.example.com", "next.example.com"))
		s.noteReach(moved("click", "next.example.com", "third.example.com"))
		for _, host := range []string{"login.example.com", "app.example.com", "next.example.com", "third.example.com"} {
			if !masked(s, host) {
				t.Errorf("typed and carried to %s without an agent navigation, but not masked there", host)
			}
		}
		// The agent's navigation takes nothing along.
		s.noteReach(moved("navigate", "third.example.com", "hostile.example.com"))
		s.noteReach(moved("snapshot", "hostile.example.com", "hostile.example.com"))
		s.noteReach(moved("go_back", "hostile.example.com", "other.example.com"))
		for _, host := range []string{"hostile.example.com", "other.example.com", "evil.example.com"} {
			if masked(s, host) {
				t.Errorf("%s was reached by the agent's navigation, yet the typed secret is masked there", host)
			}
		}
		s.egress.bound.Committed("other.example.com") // the tab's document now
		// A refused request is masked for the document that made it, and
		// withheld when the binding held a secret that document is not
		// masked for, whatever page the tab is on.
		shown := func(b Blocked) string {
			m, withheld := s.turnMasks(moved("snapshot", "other.example.com", "other.example.com"), false).blocked(b)
			if withheld {
				return refusalWithheld
			}
			return m.Mask(b.URL)
		}
		b := Blocked{URL: "https://evil.example.com/?v=" + value, Docs: []string{"other.example.com"}, Held: []*toolclad.Secret{pw}}
		if got := shown(b); got != refusalWithheld {
			t.Errorf("a request of a page off the secret's domains, refused while the binding held it, is shown as %s", got)
		}
		if got := shown(Blocked{URL: b.URL, Docs: []string{"login.example.com"}, Held: b.Held}); got != "https://evil.example.com/?v=[secret PW]" {
			t.Errorf("a request of the secret's site refused while the binding held it is shown as %s", got)
		}
		// One the binding itself refused (a popup the site's page may have
		// written the value into) is held for every typed secret, after
		// the moment that follows leaving the site too.
		s.egress.bound.Now = func() time.Time { return time.Now().Add(gate.LeftGrace) }
		s.stampBlocked(&b)
		if b.Held != nil {
			t.Errorf("the binding holds nothing now, yet the refusal was stamped with %v", b.Held)
		}
		bound := Blocked{URL: b.URL, Rule: ruleSecretBound, Docs: b.Docs}
		s.stampBlocked(&bound)
		if got := shown(bound); got != refusalWithheld {
			t.Errorf("a request the binding refused is shown as %s", got)
		}
		if got := shown(b); got != b.URL {
			t.Errorf("a refused request of a page off the secret's domains was masked: %s", got)
		}
		// A refusal no document is named for is withheld in a session
		// with secrets.
		if got := shown(Blocked{URL: b.URL, Layer: "proxy"}); got != refusalWithheld {
			t.Errorf("a refusal of no named document is shown as %s", got)
		}
	})
	t.Run("another manifest's secret", func(t *testing.T) {
		other := testkit.SecretManifest(t, "Other-Value-5531")
		s := maskSession(t, m, other)
		if got := s.masker.Load().Mask("Other-Value-5531 " + value); got != "Other-Value-5531 [secret PW]" {
			t.Errorf("the session's masker masked %q", got)
		}
		if got := s.agentMasker("login.example.com").Mask("Other-Value-5531"); got != "Other-Value-5531" {
			t.Errorf("the agent's masker masked another manifest's secret: %q", got)
		}
	})
}

// TestMaskTurnLeavesItsOwnWords: in a finished call's refusal, output and
// structured content, only the page's values are masked, never
// browsergate's words around them, whatever a secret shares with them: a
// secret holding "SECRET" masks neither the stage nor the sentence. (Page
// content, labels and log lines: package mask's
// TestMaskerLeavesItsOwnWords.)
func TestMaskTurnLeavesItsOwnWords(t *testing.T) {
	const value = "xSECRETx99"
	m := mask.FromManifests([]*toolclad.Manifest{testkit.SecretManifest(t, value)})
	d := deny("secrets", "secret domains", "secret PW may only be typed on %s, and this page is on %s", "login.example.com", "h."+value+".test")
	tr := &turn{call: &toolclad.Call{Command: &toolclad.Command{Name: "navigate"}}, deny: d,
		out: output{Text: "navigated to " + pagetext.Value("https://a.test/?q=SECRET"), Structured: map[string]any{"secrets": "v=" + value}}}
	full := maskAllWith(m, true)
	maskTurn(tr, full)
	if want := "secret PW may only be typed on login.example.com, and this page is on h.[secret PW].test"; tr.deny.Reason != want {
		t.Errorf("reason = %q, want %q", tr.deny.Reason, want)
	}
	if want := "navigated to https://a.test/?q=[part of secret PW]"; tr.out.Text != want {
		t.Errorf("output = %q, want %q", tr.out.Text, want)
	}
	if got := tr.out.Structured["secrets"]; got != "v=[secret PW]" {
		t.Errorf("structured = %v", tr.out.Structured)
	}
}

// TestARefusalNamesTheDocumentsThatMayHaveMadeIt: a refused request is
// stamped with the document of the frame the browser names (its parent's
// when it has no host of its own), the one that frame replaced less than
// gate.LeftGrace before (its unload handlers), and for a frame's document
// load the parent that may have started it; none when no frame is known.
func TestARefusalNamesTheDocumentsThatMayHaveMadeIt(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, pages: map[string]string{"s": "main"}}
	g.frameCommitted("main", "https://hostile.example/")
	g.frameCommitted("sub", "about:blank")
	g.frameEmbedded("sub", "main")
	now := time.Now()
	for _, c := range []struct {
		frame, kind string
		at          time.Time
		want        []string
	}{
		{"main", "Ping", now, []string{"hostile.example"}},
		{"sub", "Fetch", now, []string{"hostile.example"}}, // about:blank: its parent's
		{"unknown", "Fetch", now, nil},
		{"", "Fetch", now, nil},
	} {
		if got := g.refusalDocs(c.frame, c.kind, c.at); !slices.Equal(got, c.want) {
			t.Errorf("refusalDocs(%q, %q) = %v, want %v", c.frame, c.kind, got, c.want)
		}
	}
	// The agent takes the tab to the secret's site: the hostile page's
	// unload beacon, reported after the site's page committed, may be
	// either document's, until the grace has passed.
	g.frameCommitted("main", "https://login.example.com/")
	if got := g.refusalDocs("main", "Ping", time.Now()); !slices.Equal(got, []string{"login.example.com", "hostile.example"}) {
		t.Errorf("just after the commit, refusalDocs = %v, want the new document and the one it replaced", got)
	}
	if got := g.refusalDocs("main", "Ping", time.Now().Add(gate.LeftGrace)); !slices.Equal(got, []string{"login.example.com"}) {
		t.Errorf("after the grace, refusalDocs = %v, want the new document only", got)
	}
	// A frame of the site's embedded by the hostile page: its document
	// load may be the parent's doing.
	g.frameCommitted("main", "https://hostile.example/")
	g.frameCommitted("frame", "https://login.example.com/")
	g.frameEmbedded("frame", "main")
	if got := sorted(g.refusalDocs("frame", "Document", time.Now().Add(gate.LeftGrace))); !slices.Equal(got, []string{"hostile.example", "login.example.com"}) {
		t.Errorf("a frame's document load: refusalDocs = %v, want the frame's document and its parent's", got)
	}
}

func sorted(list []string) []string {
	slices.Sort(list)
	return list
}

// TestADocumentLoadIsCreditedToItsWindowGroup: a document load of a page
// or a frame may be started by any document of its window group — a
// frame's ancestors and siblings, the page's opener, the popups it opened
// and their frames — so refusalDocs names them all: those of a page the
// group does not reach (a tab of its own) are not named, those of a page
// that closed are until gate.LeftGrace after; a frame of a page the guard
// does not know names none.
func TestADocumentLoadIsCreditedToItsWindowGroup(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "opener", "s2": "popup", "s3": "tab", "s4": "grandchild", "s5": "adopted"}}
	no := false
	attachPage(g, targetInfo{TargetID: "popup", Type: "page", OpenerID: "opener"})
	attachPage(g, targetInfo{TargetID: "grandchild", Type: "page", OpenerID: "popup"})
	attachPage(g, targetInfo{TargetID: "tab", Type: "page", OpenerID: "opener", CanAccessOpener: &no}) // noopener
	g.frameCommitted("opener", "https://hostile.example/")
	g.frameCommitted("ad", "https://ads.example/")
	g.frameEmbedded("ad", "opener")
	g.frameCommitted("popup", "https://login.example.com/")
	g.frameCommitted("grandchild", "https://other.example/")
	g.frameCommitted("tab", "https://elsewhere.example/")
	g.frameCommitted("stray", "https://stray.example/") // a frame no known page embeds

	group := []string{"ads.example", "hostile.example", "login.example.com", "other.example"}
	for _, frame := range []string{"popup", "opener", "ad", "grandchild"} {
		if got := sorted(g.refusalDocs(frame, "Document", time.Now())); !slices.Equal(got, group) {
			t.Errorf("a document load of %s: refusalDocs = %v, want every document of the group %v", frame, got, group)
		}
	}
	if got := g.refusalDocs("tab", "Document", time.Now()); !slices.Equal(got, []string{"elsewhere.example"}) {
		t.Errorf("a document load of a tab opened without its opener: refusalDocs = %v, want its own document only", got)
	}
	if got := g.refusalDocs("stray", "Document", time.Now()); got != nil {
		t.Errorf("a frame of no known page: refusalDocs = %v, want none", got)
	}
	attachPage(g, targetInfo{TargetID: "adopted", Type: "page", OpenerID: "users-tab"}) // a tab the guard does not hold opened it
	g.frameCommitted("adopted", "https://adopted.example/")
	if got := g.refusalDocs("adopted", "Document", time.Now()); got != nil {
		t.Errorf("a page whose opener the guard does not hold: refusalDocs = %v, want none (not known)", got)
	}

	g.noteClosed(cdpMessage{Method: "Target.detachedFromTarget", Params: []byte(`{"sessionId":"s4"}`)})
	if got := sorted(g.refusalDocs("popup", "Document", time.Now())); !slices.Equal(got, group) {
		t.Errorf("just after a page of the group closed: refusalDocs = %v, want it still named", got)
	}
	if got := sorted(g.refusalDocs("popup", "Document", time.Now().Add(gate.LeftGrace))); slices.Contains(got, "other.example") {
		t.Errorf("after the grace: refusalDocs = %v, want the closed page no longer named", got)
	}
}

// TestARedirectIsCreditedToTheServersThatNamedIt: each request of a
// document load's redirect chain names every server of the chain before
// it; one whose request before is not known names nothing (it is
// withheld).
func TestARedirectIsCreditedToTheServersThatNamedIt(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s": "tab"}}
	g.frameCommitted("tab", "https://hostile.example/")
	if got := g.loaderDocs("tab", "f1", "n1", "", "https://login.example.com/export"); !slices.Equal(got, []string{"hostile.example"}) {
		t.Errorf("the first request: %v, want the page that started it", got)
	}
	got := sorted(g.loaderDocs("tab", "f2", "n1", "f1", "https://bounce.example/?to=x"))
	if !slices.Equal(got, []string{"hostile.example", "login.example.com"}) {
		t.Errorf("the redirect's next request: %v, want the page and the server that named its URL", got)
	}
	got = sorted(g.loaderDocs("tab", "f3", "n1", "f2", "https://login.example.com/show?token=x"))
	if !slices.Equal(got, []string{"bounce.example", "hostile.example", "login.example.com"}) {
		t.Errorf("the chain's last request: %v, want the page and every server of the chain", got)
	}
	if got := g.loaderDocs("tab", "f4", "n2", "f-unknown", "https://outside.example/"); got != nil {
		t.Errorf("a redirect whose request before is not known: %v, want none", got)
	}
	// The site's page sends the tab to a server that holds its redirect
	// longer than the grace: the redirect keeps the site's credit.
	g.frameCommitted("tab", "https://login.example.com/")
	g.loaderDocs("tab", "f5", "n3", "", "https://bounce.example/slow?token=x")
	g.frameCommitted("tab", "about:blank")
	g.replaced = map[string]replacedDoc{} // long after
	if got := sorted(g.loaderDocs("tab", "f6", "n3", "f5", "https://bounce.example/land?token=x")); !slices.Contains(got, "login.example.com") {
		t.Errorf("a redirect held past the grace: %v, want the page that started the load kept", got)
	}
}

// TestALoadOfAURLTheFrameLoadedBeforeKeepsItsChoosers: a history entry
// gone back to, or a reload, loads a URL whoever made the entry chose: it
// is credited to them as well as to the documents that may start the load
// now; the URL a frame commits has its load's credit (chosenBy), with a
// fragment as the frame commits it.
func TestALoadOfAURLTheFrameLoadedBeforeKeepsItsChoosers(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s": "tab"}}
	g.frameCommitted("tab", "https://login.example.com/")
	g.loaderDocs("tab", "f1", "n1", "", "https://login.example.com/show?token=x")
	g.urlCommitted("tab", "https://login.example.com/show?token=x", "#top", "https://login.example.com")
	if got, known := g.chosenBy("tab", "", "https://login.example.com/show?token=x#top"); !known || !slices.Equal(got, []string{"login.example.com"}) {
		t.Errorf("the committed URL: chosenBy = %v, %v; want the site's page", got, known)
	}
	g.frameCommitted("tab", "https://other.example/")
	g.replaced = map[string]replacedDoc{} // long after
	got := sorted(g.loaderDocs("tab", "f2", "n2", "", "https://login.example.com/show?token=x#top"))
	if !slices.Equal(got, []string{"login.example.com", "other.example"}) {
		t.Errorf("going back to it from another host: %v, want the page now and the entry's choosers", got)
	}
	for _, frame := range []string{"", "tab"} {
		if got, known := g.chosenBy(frame, "", "https://nowhere.example/"); known {
			t.Errorf("a URL no frame shows (frame %q): chosenBy = %v, known", frame, got)
		}
	}
}

// TestADocumentOfNoHostRunsAsItsOrigin: a popup's about:blank document
// the site's page wrote runs the site's code: a load it starts is
// credited to the site (its origin's host), not to nothing; an opaque one
// counts as the frame that embeds it.
func TestADocumentOfNoHostRunsAsItsOrigin(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "tab", "s2": "popup"}}
	attachPage(g, targetInfo{TargetID: "popup", Type: "page", OpenerID: "tab"})
	g.frameCommitted("tab", "https://hostile.example/")
	g.urlCommitted("tab", "https://hostile.example/", "", "https://hostile.example")
	g.frameCommitted("popup", "about:blank")
	g.urlCommitted("popup", "about:blank", "", "https://login.example.com")
	if got := sorted(g.refusalDocs("popup", "Document", time.Now())); !slices.Equal(got, []string{"hostile.example", "login.example.com"}) {
		t.Errorf("a load the site's blank popup may start: %v, want the site among them", got)
	}
	g.frameCommitted("sandboxed", "about:srcdoc")
	g.frameEmbedded("sandboxed", "tab")
	g.urlCommitted("sandboxed", "about:srcdoc", "", "null")
	if got := g.runsAs("sandboxed", "about:srcdoc"); got != "hostile.example" {
		t.Errorf("an opaque srcdoc frame runs as %q, want the page that embeds it", got)
	}
}

// TestAFrameThatForgotAURLCreditsItToAllItForgot: a frame that loaded
// more URLs than the guard remembers forgets them, and who chose each: a
// URL it forgot is credited to every document credited with any URL it
// forgot (the site that chose it among them), never to the documents
// that start its load again only; a URL it never loaded is credited as
// any; past maxForgot URLs, every URL it did not keep counts as
// forgotten for a load (with the documents that may start it), and its
// filter is dropped.
func TestAFrameThatForgotAURLCreditsItToAllItForgot(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s": "tab"}}
	show := "https://login.example.com/show?pw=x"
	g.frameCommitted("tab", "https://login.example.com/")
	g.loaderDocs("tab", "f", "", "", show)
	g.frameCommitted("tab", "https://hostile.example/")
	g.replaced = map[string]replacedDoc{} // long after
	for i := range maxSeen {
		g.loaderDocs("tab", fmt.Sprint("f", i), "", "", fmt.Sprint("https://hostile.example/loop?n=", i))
	}
	if got := sorted(g.loaderDocs("tab", "again", "", "", show)); !slices.Equal(got, []string{"hostile.example", "login.example.com"}) {
		t.Errorf("a URL the frame forgot: credited to %v, want the site with the page now", got)
	}
	g.urlCommitted("tab", show, "", "https://login.example.com")
	if got, known := g.chosenBy("tab", "", show); !known || !slices.Contains(got, "login.example.com") {
		t.Errorf("chosenBy = %v, %v; want the site among them", got, known)
	}
	if got := g.loaderDocs("tab", "new", "", "", "https://hostile.example/elsewhere"); !slices.Equal(got, []string{"hostile.example"}) {
		t.Errorf("a URL the frame never loaded: credited to %v, want [hostile.example]", got)
	}
	for i := range maxForgot + maxSeen {
		g.loaderDocs("tab", fmt.Sprint("g", i), "", "", fmt.Sprint("https://hostile.example/more?n=", i))
	}
	if got := sorted(g.loaderDocs("tab", "newer", "", "", "https://hostile.example/never")); !slices.Equal(got, []string{"hostile.example", "login.example.com"}) {
		t.Errorf("past maxForgot: a URL is credited to %v, want all the frame forgot", got)
	}
	if f := g.links.seen["tab"].forgot; f != nil {
		t.Errorf("past maxForgot the frame keeps a filter of %d URLs", f.n)
	}
}

// TestARedirectKeepsItsCreditAfterManyRequests: the guard keeps the
// latest document requests in flight (maxLinks to twice that entries): a
// redirect whose first request is among the older half still gets its
// credit, the server that named it among it, never "not known".
func TestARedirectKeepsItsCreditAfterManyRequests(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s": "tab"}}
	g.frameCommitted("tab", "https://hostile.example/")
	for i := range maxLinks/2 - 1 { // two entries each: a Fetch and a Network id
		g.loaderDocs("tab", fmt.Sprint("f", i), fmt.Sprint("n", i), "", fmt.Sprint("https://hostile.example/a?n=", i))
	}
	g.loaderDocs("tab", "first", "nfirst", "", "https://login.example.com/export") // the newer half is full
	g.loaderDocs("tab", "other", "nother", "", "https://hostile.example/other")    // and becomes the older
	got := sorted(g.loaderDocs("tab", "hop", "nfirst", "first", "https://elsewhere.example/landing?v=1"))
	if !slices.Equal(got, []string{"hostile.example", "login.example.com"}) {
		t.Errorf("the redirect is credited to %v, want [hostile.example login.example.com]", got)
	}
}

// TestAReplacedBlankDocumentCountsAsTheOriginItRanAs: the site's blank
// popup B (it runs as the site) is replaced; its unload handler, which
// runs after B's next document committed, may navigate a page of its
// window group: that load is credited to the site, the origin B's replaced
// document ran as.
func TestAReplacedBlankDocumentCountsAsTheOriginItRanAs(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "H", "s2": "A", "s3": "B"}}
	attachPage(g, targetInfo{TargetID: "A", Type: "page", OpenerID: "H"})
	attachPage(g, targetInfo{TargetID: "B", Type: "page", OpenerID: "A"})
	g.frameCommitted("H", "https://hostile.example/")
	g.urlCommitted("H", "https://hostile.example/", "", "https://hostile.example")
	g.frameCommitted("A", "https://login.example.com/")
	g.urlCommitted("A", "https://login.example.com/", "", "https://login.example.com")
	g.frameCommitted("B", "about:blank")
	g.noteOrigin("B", "https://login.example.com")
	delete(g.pages, "s2")
	g.links.closed = map[string]time.Time{"A": time.Now().Add(-2 * gate.LeftGrace)}
	if got := sorted(g.loaderDocs("H", "f0", "n0", "", "https://hostile.example/?s=0")); !slices.Contains(got, "login.example.com") {
		t.Errorf("while B is blank, a load of H is credited to %v: want the site, which B runs as", got)
	}
	// B navigates itself off; its unload handler then sets H's location.
	g.frameCommitted("B", "https://hostile.example/x")
	g.urlCommitted("B", "https://hostile.example/x", "", "https://hostile.example")
	got := sorted(g.loaderDocs("H", "f1", "n1", "", "https://hostile.example/?s=SECRET"))
	if !slices.Contains(got, "login.example.com") {
		t.Errorf("the load B's replaced (site) document may have started is credited to %v only", got)
	}
}

// attachPage has g take a page as it attaches: its creator, in the read
// loop, then its opener.
func attachPage(g *targetGuard, t targetInfo) {
	p, err := json.Marshal(map[string]any{"targetInfo": t})
	if err != nil {
		panic(err)
	}
	g.noteCreator(cdpMessage{Method: "Target.attachedToTarget", Params: p})
	g.noteOpener(t)
}

// oneTabGuard is s's guard of one tab, T, the session's page s1.
func oneTabGuard(s *session) *targetGuard {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "T"}}
	s.egress.guard = g
	return g
}

// loadedIn has g pause a load of u in frame and take its commit (its
// document's origin: origin), as the guard's read loop does.
func loadedIn(g *targetGuard, frame, u, origin string) {
	g.loaderDocs(frame, "f:"+u, "n:"+u, "", u)
	g.frameCommitted(frame, u)
	g.urlCommitted(frame, u, "", origin)
}

// moveWithin hands g the message of a move of frame to u within its
// document (a fragment, history.pushState), as the guard's read loop does.
func moveWithin(g *targetGuard, frame, u string) {
	p, err := json.Marshal(map[string]string{"frameId": frame, "url": u})
	if err != nil {
		panic(err)
	}
	g.noteWithinDocument(cdpMessage{Method: "Page.navigatedWithinDocument", Params: p})
}

// TestAnOpaquePopupsLoadIsCreditedToItsCreator: a blank popup of an
// opaque origin (opened by the site's sandboxed srcdoc frame,
// allow-popups) runs its creator's code: once its opener closed, its
// loads are credited to the host its creator ran as when it opened the
// popup, never to nobody (the agent's choice); not known when the browser
// named no creator the guard knows a host for.
func TestAnOpaquePopupsLoadIsCreditedToItsCreator(t *testing.T) {
	for _, c := range []struct {
		name, creator string
		want          []string // nil: not known
	}{
		{"the site's sandboxed frame", "S", []string{"login.example.com"}},
		{"a frame the guard never saw", "X", nil},
		{"a frame the hostile page sent to the site as it opened the popup", "H", []string{"hostile.example", "login.example.com"}},
	} {
		g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
			pages: map[string]string{"s2": "A", "s3": "B"}}
		g.frameCommitted("A", "https://login.example.com/")
		g.urlCommitted("A", "https://login.example.com/", "", "https://login.example.com")
		g.frameCommitted("S", "about:srcdoc")
		g.frameEmbedded("S", "A")
		g.urlCommitted("S", "about:srcdoc", "", "null")
		g.frameCommitted("H", "https://hostile.example/frame")
		g.frameEmbedded("H", "A")
		g.frameCommitted("H", "https://login.example.com/") // before the popup's attach was taken
		attachPage(g, targetInfo{TargetID: "B", Type: "page", OpenerID: "A", OpenerFrameID: c.creator})
		g.frameCommitted("B", "about:blank")
		g.noteOrigin("B", "null")
		delete(g.pages, "s2")
		g.links.closed = map[string]time.Time{"A": time.Now().Add(-2 * gate.LeftGrace)}
		got := g.loaderDocs("B", "f1", "n1", "", "https://hostile.example/?s=SECRET")
		if c.want == nil && got != nil || c.want != nil && !slices.Equal(sorted(got), c.want) {
			t.Errorf("%s: the opaque popup's load is credited to %v (nil: not known), want %v", c.name, got, c.want)
		}
	}
}

// TestAURLWhoseChoosersAreNotKnownIsWithheldInASessionWithSecrets: in a
// session with secrets, the URL of a frame of the session's whose
// choosers the guard does not know is withheld but for its origin on any
// host (the secret's site may have sent it, with the value in its URL, to
// a host the secret is not masked for), but a blank page's; in a session
// without secrets it is shown as it is.
func TestAURLWhoseChoosersAreNotKnownIsWithheldInASessionWithSecrets(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	u := "https://elsewhere.example/landing?v=" + value
	withSecrets := maskSession(t, testkit.SecretManifest(t, value))
	without := maskSession(t, testkit.SecretManifest(t, value))
	without.masker.Store(nil)
	for _, s := range []*session{withSecrets, without} {
		g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, pages: map[string]string{"s1": "T"}}
		g.urlCommitted("T", "about:blank", "", "")
		g.frameCommitted("F", u)
		g.urlCommitted("F", u, "", "https://elsewhere.example") // no load of it paused: not known
		s.egress.guard = g
		if got := s.shownURL("T", "about:blank"); got != "about:blank" {
			t.Errorf("a blank page is shown as %q", got)
		}
	}
	if got := withSecrets.shownURL("F", u); got != "https://elsewhere.example/"+urlWithheld {
		t.Errorf("with secrets, a URL not known is shown as %q", got)
	}
	if got := without.shownURL("F", u); got != u {
		t.Errorf("without secrets, a URL not known is shown as %q", got)
	}
}

// TestAURLTheGuardDoesNotHoldIsMaskedForItsHost: the URL of a tab the
// session's guard never held (the user's tab in live mode, not adopted),
// on the secret's site, is masked for its host, as its page is, with or
// without a guard; and so is the title the browser gives as that URL.
func TestAURLTheGuardDoesNotHoldIsMaskedForItsHost(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	u := "https://login.example.com/reset?pw=" + value
	for _, g := range []*targetGuard{nil, {frames: map[string]string{}, frameParents: map[string]string{}, pages: map[string]string{}}} {
		s.egress.guard = g
		for what, got := range map[string]string{"URL": s.shownURL("U", u), "title": s.shownTitle("U", strings.TrimPrefix(u, "https://"), u)} {
			if strings.Contains(got, value) || !strings.Contains(got, "[secret PW]") {
				t.Errorf("guard %v: the %s is shown as %q, want it masked for its host", g != nil, what, got)
			}
		}
	}
}

// TestAnotherFramesLoadOfAURLSaysNothingOfWhoChoseATabs: the site sent
// the agent's tab to a URL with the value in it; a hostile page's frame
// then loads that URL, and its guess: how the tab's URL is shown does
// not change with whether the guess was right.
func TestAnotherFramesLoadOfAURLSaysNothingOfWhoChoseATabs(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	show := func(guess string) string {
		g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
			pages: map[string]string{"s1": "T", "s2": "H"}}
		s.egress.guard = g
		u := "https://login.example.com/show?pw=" + value
		g.frameCommitted("T", "https://login.example.com/")
		g.loaderDocs("T", "f1", "n1", "", u)
		g.frameCommitted("T", u)
		g.urlCommitted("T", u, "", "https://login.example.com")
		g.frameCommitted("H", "https://hostile.example/")
		g.frameCommitted("HF", "about:blank")
		g.frameEmbedded("HF", "H")
		g.loaderDocs("HF", "f2", "n2", "", "https://login.example.com/show?pw="+guess)
		g.frameCommitted("HF", "https://login.example.com/show?pw="+guess)
		g.urlCommitted("HF", "https://login.example.com/show?pw="+guess, "", "https://login.example.com")
		return s.shownURL("T", u)
	}
	right, wrong := show(value), show("Aa1-Bb2_Cc3-Dd4")
	if right != wrong || strings.Contains(right, value) {
		t.Errorf("the tab's URL is shown as %q after the right guess, %q after a wrong one", right, wrong)
	}
}

// TestAFragmentAnotherPageSetIsNoOracle: a hostile popup of the site's
// page sets the page's fragment to its guess (opener.location =
// URL#guess, a move within the document). How the tab's URL is shown does
// not depend on whether the guess is right: before the guard takes the
// move (the state line may read it first), after it, after a reload of
// it once the popup is gone, and after the page comes back from the
// back/forward cache.
func TestAFragmentAnotherPageSetIsNoOracle(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	a := "https://login.example.com/a"
	show := func(guess, then string) string {
		g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
			pages: map[string]string{"s1": "T", "s2": "H"}}
		s.egress.guard = g
		g.frameCommitted("T", "https://login.example.com/")
		g.loaderDocs("T", "f1", "n1", "", a)
		g.frameCommitted("T", a)
		g.urlCommitted("T", a, "", "https://login.example.com")
		attachPage(g, targetInfo{TargetID: "H", Type: "page", OpenerID: "T"})
		g.frameCommitted("H", "https://hostile.example/")
		moved := a + "#" + guess
		if then == "not taken yet" {
			return s.shownURL("T", moved)
		}
		moveWithin(g, "T", moved)
		g.links.closed = map[string]time.Time{"H": time.Now().Add(-2 * gate.LeftGrace)} // the popup is gone
		switch then {
		case "reload":
			g.loaderDocs("T", "f2", "n2", "", moved)
			g.frameCommitted("T", a)
			g.urlCommitted("T", a, "#"+guess, "https://login.example.com")
		case "back/forward cache":
			g.loaderDocs("T", "f2", "n2", "", "https://login.example.com/b")
			g.frameCommitted("T", "https://login.example.com/b")
			g.urlCommitted("T", "https://login.example.com/b", "", "https://login.example.com")
			g.frameCommitted("T", a) // no load: restored
			g.urlCommitted("T", a, "#"+guess, "https://login.example.com")
		}
		return s.shownURL("T", moved)
	}
	for _, then := range []string{"not taken yet", "taken", "reload", "back/forward cache"} {
		right, wrong := show(value, then), show("Aa1-Bb2_Cc3-Dd4", then)
		if strings.Contains(right, "[secret") != strings.Contains(wrong, "[secret") || strings.Contains(right, value) ||
			strings.Contains(right, urlWithheld) != strings.Contains(wrong, urlWithheld) {
			t.Errorf("%s: the tab's URL is shown as %q after the right guess, %q after a wrong one", then, right, wrong)
		}
	}
}

// TestAPageThatMovesItselfOftenKeepsTheFramesLoads: a page that rewrites
// its own URL within its document over and over (a map, a feed: here
// thousands of times, far fewer than maxForgot) does not make its frame
// forget who chose the URLs it loaded: going back to the page before is
// shown as it was, and a new URL's load is still credited.
func TestAPageThatMovesItselfOftenKeepsTheFramesLoads(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	account := "https://login.example.com/account"
	g.loaderDocs("T", "f1", "n1", "", account) // the agent's navigate, in a fresh tab
	g.frameCommitted("T", account)
	g.urlCommitted("T", account, "", "https://login.example.com")
	loadedIn(g, "T", "https://maps.example/", "https://maps.example")
	for i := range 32 * maxSeen { // the filter's chance of holding account: about 1 in a million
		moveWithin(g, "T", fmt.Sprint("https://maps.example/@", i))
	}
	g.loaderDocs("T", "f3", "n3", "", account) // back
	g.frameCommitted("T", account)
	g.urlCommitted("T", account, "", "https://login.example.com")
	if got := s.shownURL("T", account); got != account {
		t.Errorf("going back after the map's moves, the page is shown as %q", got)
	}
	if got := g.loaderDocs("T", "f4", "n4", "", "https://login.example.com/new"); got == nil {
		t.Errorf("a new URL's load after the map's moves is not known")
	}
}

// TestAPagesOwnFragmentBeforeTheGuardTookItIsShown: the agent's page sets
// its own fragment (a hash router) as it loads; the state line may read
// it before the guard took the move: it is credited as the move will be
// (the page, as no other page is open), never withheld.
func TestAPagesOwnFragmentBeforeTheGuardTookItIsShown(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	app := "https://login.example.com/app"
	g.loaderDocs("T", "f1", "n1", "", app)
	g.frameCommitted("T", app)
	g.urlCommitted("T", app, "#/", "https://login.example.com")
	if got := s.shownURL("T", app+"#/login"); got != app+"#/login" {
		t.Errorf("the page's own new fragment, not taken yet, is shown as %q", got)
	}
}

// TestARedirectBackToTheFramesURLIsCreditedBeforeItsCommit: the hostile
// page (at its URL with a guess in the query or fragment) sends itself to
// the site's sign-in, which redirects back to the page's URL with the
// value; read before the guard took the commit, that URL is credited to
// the redirect's choosers (the site among them): never shown in clear,
// and shown alike whether the page's guess was right or wrong — also
// when the page's server holds the last hop while the page makes more
// loads than the guard keeps in flight.
func TestARedirectBackToTheFramesURLIsCreditedBeforeItsCommit(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	show := func(guess, in string, flush bool) string {
		g := oneTabGuard(s)
		a := "https://hostile.example/a" + in + "token=" + guess
		g.loaderDocs("T", "f1", "n1", "", a)
		g.frameCommitted("T", a)
		g.urlCommitted("T", a, "", "https://hostile.example")
		g.loaderDocs("T", "f2", "n2", "", "https://login.example.com/sso")
		back := "https://hostile.example/a" + in + "token=" + value
		g.loaderDocs("T", "f3", "n2", "f2", back) // the site's redirect
		if flush {
			g.frameParents["F"] = "T"
			for i := range 2*maxLinks + 1 {
				g.loaderDocs("F", fmt.Sprint("x", i), "", "", fmt.Sprint("https://hostile.example/hang?n=", i))
			}
		}
		return s.shownURL("T", back)
	}
	for _, in := range []string{"?", "#"} {
		for _, flush := range []bool{false, true} {
			right, wrong := show(value, in, flush), show("Aa1-Bb2_Cc3-Dd4", in, flush)
			if strings.Contains(right, value) || strings.Contains(right, "[secret") != strings.Contains(wrong, "[secret") ||
				strings.Contains(right, urlWithheld) != strings.Contains(wrong, urlWithheld) {
				t.Errorf("value in %q, loads in flight flushed %v: the redirect's URL is shown as %q after the right guess, %q after a wrong one",
					in, flush, right, wrong)
			}
		}
	}
}

// TestAnAppThatComesBackToAViewKeepsItKnown: a single-page app moves
// through more views than the guard remembers, then back to the first:
// a reload of it is credited to the app (all its forgotten moves were
// its own), and shown, not withheld.
func TestAnAppThatComesBackToAViewKeepsItKnown(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	loadedIn(g, "T", "https://mail.example/", "https://mail.example")
	moveWithin(g, "T", "https://mail.example/inbox")
	for i := range maxSeen + 1 {
		moveWithin(g, "T", fmt.Sprint("https://mail.example/m/", i))
	}
	moveWithin(g, "T", "https://mail.example/inbox")
	inbox := "https://mail.example/inbox"
	g.loaderDocs("T", "f2", "n2", "", inbox) // a reload
	g.frameCommitted("T", inbox)
	g.urlCommitted("T", inbox, "", "https://mail.example")
	if got := s.shownURL("T", inbox); got != inbox {
		t.Errorf("the app's view, reloaded after its moves, is shown as %q", got)
	}
}

// TestANewFramesLoadIsCreditedBeforeTheGuardHearsOfIt: the tab's log
// hears of a new frame's first load on its own connection, maybe before
// the guard heard the frame attach: with the parent the log names, the
// load is credited to the parent's window group, not "not known".
func TestANewFramesLoadIsCreditedBeforeTheGuardHearsOfIt(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "P"}}
	g.frameCommitted("P", "https://hostile.example/")
	if got := g.frameLoaders("F", "https://login.example.com/?g=guess", "P"); !slices.Equal(got, []string{"hostile.example"}) {
		t.Errorf("the new frame's load is credited to %v, want [hostile.example]", got)
	}
	if got := g.frameLoaders("G", "https://login.example.com/", ""); got != nil {
		t.Errorf("a frame neither knows: credited to %v, want not known", got)
	}
}

// TestALossyFramesBlankPageWithAValueIsNotShown: a hostile page makes its
// tab load more URLs than the guard can keep even a trace of, then has
// the site send the tab to about:blank with the value in the fragment (no
// load the guard pauses): the frame may never have had that URL, so who
// chose it is not known, and it is withheld, never shown in clear.
func TestALossyFramesBlankPageWithAValueIsNotShown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	loadedIn(g, "T", "https://hostile.example/", "https://hostile.example")
	for i := range maxForgot + 2*maxSeen {
		g.loaderDocs("T", fmt.Sprint("f", i), "", "", fmt.Sprint("https://hostile.example/r?n=", i))
	}
	if !g.links.seen["T"].lossy {
		t.Fatal("the frame's memory is not lossy")
	}
	g.frameCommitted("T", "about:blank")
	g.urlCommitted("T", "about:blank", "#token="+value, "https://login.example.com")
	if got := s.shownURL("T", "about:blank#token="+value); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("the blank page the site sent the tab to is shown as %q", got)
	}
}

// TestAMoveForgottenLongAgoIsNotCreditedToThePageNow: the site's app
// moves to a URL with the value in it; the agent goes to a hostile page,
// which rewrites its URL more times than the guard can keep a trace of,
// then goes back: the site's URL is credited to the site too (it may be
// one of the moves the frame forgot), never shown in clear.
func TestAMoveForgottenLongAgoIsNotCreditedToThePageNow(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	app, done := "https://login.example.com/app", "https://login.example.com/done?token="+value
	loadedIn(g, "T", app, "https://login.example.com")
	moveWithin(g, "T", done)
	loadedIn(g, "T", "https://hostile.example/", "https://hostile.example")
	for i := range maxForgot + 2*maxSeen {
		moveWithin(g, "T", fmt.Sprint("https://hostile.example/?n=", i))
	}
	g.loaderDocs("T", "f3", "n3", "", done) // history.back()
	g.frameCommitted("T", done)
	g.urlCommitted("T", done, "", "https://login.example.com")
	if got := s.shownURL("T", done); strings.Contains(got, value) {
		t.Errorf("going back to the site's move, its URL is shown as %q", got)
	}
}

// TestAFrameThatForgotTooManyChoosersForgetsWhoChoseThem: the credit of
// what a frame forgot is kept for at most maxDropped hosts; past that, a
// URL it forgot is not known (and a load of it withheld), and the memory
// stays bounded.
func TestAFrameThatForgotTooManyChoosersForgetsWhoChoseThem(t *testing.T) {
	var mems map[string]*urlMemory
	for i := range maxDropped + maxSeen + 1 {
		mems = remember(mems, "F", fmt.Sprint("https://a.example/", i), []string{fmt.Sprint("h", i, ".example")})
	}
	m := mems["F"]
	if m.dropped != nil || !m.droppedUnknown {
		t.Errorf("past %d hosts the memory keeps %d of them (not known: %v)", maxDropped, len(m.dropped), m.droppedUnknown)
	}
	if docs, _, maybe := m.recall("https://a.example/0"); !maybe || docs != nil {
		t.Errorf("a forgotten URL: credited to %v (may have forgotten it: %v), want not known", docs, maybe)
	}
}

// TestAURLTheFramesFilterMayHoldIsNotKnownWithoutALoad: a frame's filter
// of forgotten URLs may hold a URL the frame never had (a false
// positive, which a page that fills the filter makes likely); a commit
// no load credits (the site sends the tab to about:blank with the value
// in the fragment) is then not known, withheld, never credited to what
// the frame forgot.
func TestAURLTheFramesFilterMayHoldIsNotKnownWithoutALoad(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	loadedIn(g, "T", "https://hostile.example/", "https://hostile.example")
	filter := &urlFilter{}
	filter.add("about:blank") // as a false positive would hold it
	g.links.seen["T"].forgot, g.links.seen["T"].dropped = filter, []string{"hostile.example"}
	g.frameCommitted("T", "about:blank")
	g.urlCommitted("T", "about:blank", "#token="+value, "https://login.example.com")
	if got := s.shownURL("T", "about:blank#token="+value); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("the blank page the site sent the tab to is shown as %q", got)
	}
}

// TestAnAppsViewIsShownAfterItsFrameForgotWhoChoseItsMoves: a mail app
// moves through more views than the guard keeps while an ad frame in it
// rotates through more hosts than it keeps the credit of, then back to
// its inbox: the view it is at now is credited to its load and moves as
// they are now, and shown.
func TestAnAppsViewIsShownAfterItsFrameForgotWhoChoseItsMoves(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	mail, inbox := "https://mail.example/", "https://mail.example/inbox"
	loadedIn(g, "T", mail, "https://mail.example")
	g.frameParents["ad"] = "T"
	moveWithin(g, "T", inbox)
	for i := range 2*maxSeen + 1 {
		g.frameCommitted("ad", fmt.Sprintf("https://ad%d.example/", i))
		moveWithin(g, "T", fmt.Sprint("https://mail.example/m/", i))
	}
	if !g.links.moved["T"].droppedUnknown {
		t.Fatal("the frame still knows who chose every move it forgot")
	}
	moveWithin(g, "T", inbox)
	if got := s.shownURL("T", inbox); got != inbox {
		t.Errorf("the app's inbox, where it is now, is shown as %q", got)
	}
}

// TestARestoredPageOfAForgottenLoadIsNotShownInClear: the site sends the
// tab to the hostile page with the value in the fragment; the page makes
// more loads than the frame keeps (none commits), goes on to another of
// its pages, moves that one to the first one's path and goes back in
// history: the browser restores the first page from its back/forward
// cache, which pauses no load. Read before the guard takes the restore,
// its URL is credited to the frame's forgotten loads too (the site among
// them): never shown in clear.
func TestARestoredPageOfAForgottenLoadIsNotShownInClear(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	a := "https://hostile.example/a"
	g.loaderDocs("T", "f0", "n0", "", "https://login.example.com/sso")
	g.loaderDocs("T", "f1", "n0", "f0", a) // the site's redirect, with #token=value
	g.frameCommitted("T", a)
	g.urlCommitted("T", a, "#token="+value, "https://hostile.example")
	for i := range 2*maxSeen + 1 {
		g.loaderDocs("T", fmt.Sprint("x", i), "", "", fmt.Sprint("https://hostile.example/r?n=", i))
	}
	loadedIn(g, "T", "https://hostile.example/b", "https://hostile.example")
	moveWithin(g, "T", a)
	if got := s.shownURL("T", a+"#token="+value); strings.Contains(got, value) {
		t.Errorf("the restored page's URL is shown as %q", got)
	}
}

// TestAFramesURLNotKnownStaysNotKnown: a move made while the tab's window
// group holds a page the guard does not (a popup it let go) is not
// known, even where the frame loaded that URL before: withheld.
func TestAFramesURLNotKnownStaysNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	x := "https://hostile.example/x"
	loadedIn(g, "T", "https://hostile.example/", "https://hostile.example")
	loadedIn(g, "T", x, "https://hostile.example")
	attachPage(g, targetInfo{TargetID: "P", Type: "page", OpenerID: "T"}) // not one the guard holds
	moveWithin(g, "T", x+"#token="+value)
	if got := s.shownURL("T", x+"#token="+value); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("the move's URL is shown as %q", got)
	}
}

package executor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestAURLReadFromADocumentTheGuardHasNotTakenIsNotKnown: the site sends
// the tab to the hostile page with the value, which moves itself to a
// path with the value in it; the page goes on to another of its pages,
// moves that one to the same path with a guess, and goes back in
// history: the browser restores the first page from its back/forward
// cache (no load paused). The state line read the restored page's URL
// before the guard took the restore: it is not known, withheld, whatever
// the guess; once the guard took it, it is credited to the move (the
// site among its choosers).
func TestAURLReadFromADocumentTheGuardHasNotTakenIsNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	for _, in := range []string{"#", "?"} {
		for _, guess := range []string{value, "Aa1-Bb2_Cc3-Dd4"} {
			g := oneTabGuard(s)
			a, c := "https://hostile.example/a", "https://hostile.example/c"
			g.loaderDocs("T", "f0", "n0", "", "https://login.example.com/sso")
			g.loaderDocs("T", "f1", "n0", "f0", a) // the site's redirect, with #token=value
			g.frameCommitted("T", a)
			g.urlCommitted("T", a, "#token="+value, "https://hostile.example")
			g.noteLoader("T", "L1")
			restored := c + in + "token=" + value
			moveWithin(g, "T", restored)
			loadedIn(g, "T", "https://hostile.example/d", "https://hostile.example")
			g.noteLoader("T", "L2")
			moveWithin(g, "T", c+in+"token="+guess)

			read := pageURL{tab: "T", doc: "L1", url: restored}
			if got := s.shownPageURL(read); !strings.HasSuffix(got, urlWithheld) {
				t.Errorf("value in %q, guess %s: the restored page's URL, read before the guard took it, is shown as %q", in, guess, got)
			}
			doc := withoutFragment(restored)
			g.frameCommitted("T", doc)
			g.urlCommitted("T", doc, strings.TrimPrefix(restored, doc), "https://hostile.example")
			g.noteLoader("T", "L1")
			if got := s.shownPageURL(read); strings.Contains(got, value) {
				t.Errorf("value in %q, guess %s: the restored page's URL, once the guard took it, is shown as %q", in, guess, got)
			}
		}
	}
}

// TestAURLReadBeforeTheTabWentOnIsNotKnown: the site's redirect left the
// value in an app's URL; the state line read it; then the tab went on to
// another document of the app at the same path (a navigate whose query
// the app's router strips). When the call's texts are masked, the URL
// read before is not known (its document is gone), never credited as the
// new document; the URL read after, from the guard's document, is shown.
// A read of the document before a reload is not known; the next read,
// of the reloaded one, is shown; a read that named no document is not
// known.
func TestAURLReadBeforeTheTabWentOnIsNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	g := oneTabGuard(s)
	c := "https://client.example/c"
	g.loaderDocs("T", "f0", "n0", "", "https://login.example.com/sso")
	g.loaderDocs("T", "f1", "n0", "f0", "https://client.example/cb")
	g.frameCommitted("T", "https://client.example/cb")
	g.urlCommitted("T", "https://client.example/cb", "#token="+value, "https://client.example")
	g.noteLoader("T", "L1")
	moveWithin(g, "T", c+"#token="+value)
	before := pageURL{tab: "T", doc: "L1", url: c + "#token=" + value}
	loadedIn(g, "T", c+"?utm=1", "https://client.example")
	g.noteLoader("T", "L2")
	moveWithin(g, "T", c)
	if got := s.shownPageURL(before); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("the URL read before the tab went on is shown as %q, want withheld", got)
	}
	if got := s.shownPageURL(pageURL{tab: "T", doc: "L2", url: c}); got != c {
		t.Errorf("the URL read after is shown as %q", got)
	}

	e := "https://client.example/e"
	loadedIn(g, "T", e, "https://client.example")
	g.noteLoader("T", "L3")
	loadedIn(g, "T", e, "https://client.example") // a reload
	g.noteLoader("T", "L4")
	if got := s.shownPageURL(pageURL{tab: "T", doc: "L3", url: e}); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("a read of the document before the reload: shown as %q, want withheld", got)
	}
	if got := s.shownPageURL(pageURL{tab: "T", doc: "L4", url: e}); got != e {
		t.Errorf("a read of the reloaded document: shown as %q", got)
	}
	if got := s.shownPageURL(pageURL{tab: "T", doc: unnamedDoc, url: e}); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("a read that named no document: shown as %q, want withheld", got)
	}
}

// TestAReadOfATabTheGuardSawNoCommitOfIsCreditedAsBefore: a tab whose
// commits the guard has not seen (one it attached to after its page
// loaded) is credited as the guard sees it, whatever document the read
// names.
func TestAReadOfATabTheGuardSawNoCommitOfIsCreditedAsBefore(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	u := "https://mail.example/"
	loadedIn(g, "T", u, "https://mail.example")
	if got := s.shownPageURL(pageURL{tab: "T", doc: "L9", url: u}); got != u {
		t.Errorf("shown as %q", got)
	}
}

// TestAURLReadWhileItsDocumentWasTheGuardsKeepsItsCredit: the state line
// read the tab's URL while its document was the guard's latest; then the
// call reset the tab (a refusal of where it led): the refusal's quote of
// that URL is credited as it was when it was read, not withheld.
func TestAURLReadWhileItsDocumentWasTheGuardsKeepsItsCredit(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	u := "https://mail.example/inbox"
	loadedIn(g, "T", u, "https://mail.example")
	g.noteLoader("T", "L1")
	g.settleRead(context.Background(), "T", "L1", u)
	g.frameCommitted("T", "about:blank") // the reset
	g.urlCommitted("T", "about:blank", "", "")
	g.noteLoader("T", "L2")
	if got := s.shownPageURL(pageURL{tab: "T", doc: "L1", url: u}); got != u {
		t.Errorf("the URL read before the reset is shown as %q", got)
	}
}

// TestAReadOfAMoveTheGuardHasNotTakenKeepsNoCredit: the tab loaded a URL
// with a guess before; the site's redirect leaves the value in the
// fragment, and the page moves itself to that URL with the value in the
// query; the state line reads it before the guard took the move: the URL
// read, and the tab's URL from the target list, are withheld, right
// guess or wrong, never credited by the earlier load of that URL, while
// its document is the tab's and once the page went on to another
// document.
func TestAReadOfAMoveTheGuardHasNotTakenKeepsNoCredit(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	for _, guess := range []string{value, "Aa1-Bb2_Cc3-Dd4"} {
		g := oneTabGuard(s)
		c := "https://client.example/c"
		loadedIn(g, "T", c+"?token="+guess, "https://client.example")
		g.loaderDocs("T", "f0", "n0", "", "https://login.example.com/sso")
		g.loaderDocs("T", "f1", "n0", "f0", "https://client.example/cb")
		g.frameCommitted("T", "https://client.example/cb")
		g.urlCommitted("T", "https://client.example/cb", "#token="+value, "https://client.example")
		g.noteLoader("T", "L1")
		read := pageURL{tab: "T", doc: "L1", url: c + "?token=" + value} // the move, not taken yet
		g.settleRead(context.Background(), "T", read.doc, read.url)
		withheldNowAndAfterACommit(t, s, g, read, "L2", guess)
	}
}

// withheldNowAndAfterACommit checks that the URL read is withheld while
// its tab is where it was, and so is the URL asked of the tab with no
// document named (the target list's: list_tabs), and the URL read once
// the tab committed another document of the site's (loader next).
func withheldNowAndAfterACommit(t *testing.T, s *session, g *targetGuard, read pageURL, next, guess string) {
	t.Helper()
	if got := s.shownPageURL(read); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("guess %s: while the tab is where it was read, the URL read is shown as %q, want withheld", guess, got)
	}
	if got := s.shownPageURL(pageURL{tab: read.tab, url: read.url}); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("guess %s: the tab's URL from the target list is shown as %q, want withheld", guess, got)
	}
	loadedIn(g, read.tab, "https://client.example/next", "https://client.example")
	g.noteLoader(read.tab, next)
	if got := s.shownPageURL(read); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("guess %s: after the tab's next commit, the URL read is shown as %q, want withheld", guess, got)
	}
}

// TestAReadOfALateAttachedTabKeepsItsCredit: the guard saw no commit of
// the tab when its URL was read; the call then navigates it: the URL read
// is credited as it was then.
func TestAReadOfALateAttachedTabKeepsItsCredit(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	u := "https://mail.example/"
	loadedIn(g, "T", u, "https://mail.example")
	g.settleRead(context.Background(), "T", "L0", u)
	loadedIn(g, "T", "https://mail.example/next", "https://mail.example")
	g.noteLoader("T", "L1")
	if got := s.shownPageURL(pageURL{tab: "T", doc: "L0", url: u}); got != u {
		t.Errorf("the URL read before the call is shown as %q", got)
	}
}

// TestAMoveInATabTheGuardSawNoCommitOfIsNotKnown: an adopted tab (the
// guard knows its frame, no commit of it); the agent's load of the page
// with a guess in its query never commits (its server answers 204), and
// the page moves itself to that URL with the value in it, a move the
// guard cannot take (it holds no URL of the tab). The state line's URL is
// withheld, right guess or wrong, then and after the tab's next commit;
// so is the page at that URL the browser then restores from its
// back/forward cache (no load paused).
func TestAMoveInATabTheGuardSawNoCommitOfIsNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	for _, guess := range []string{value, "Aa1-Bb2_Cc3-Dd4"} {
		g := oneTabGuard(s)
		c := "https://client.example/c"
		g.frameCommitted("T", "https://client.example/home") // adopted: seedFrames
		g.loaderDocs("T", "f0", "n0", "", c+"?token="+guess) // answered 204: no commit
		moveWithin(g, "T", c+"?token="+value)
		read := pageURL{tab: "T", doc: "L0", url: c + "?token=" + value}
		g.settleRead(context.Background(), "T", read.doc, read.url)
		withheldNowAndAfterACommit(t, s, g, read, "L1", guess)
		g.frameCommitted("T", read.url) // restored: no load paused
		g.urlCommitted("T", read.url, "", "https://client.example")
		g.noteLoader("T", "L2")
		if got := s.shownPageURL(pageURL{tab: "T", doc: "L2", url: read.url}); !strings.HasSuffix(got, urlWithheld) {
			t.Errorf("guess %s: the page restored at the URL is shown as %q, want withheld", guess, got)
		}
	}
}

// TestAReadOfAMoveTheGuardTookLaterKeepsItsCredit: an app moves itself
// (pushState) and the state line reads the new URL before the guard took
// the move; the guard takes it within the read's wait, and the app moves
// on again before the call's end: the URL read is credited as the guard
// took it, shown.
func TestAReadOfAMoveTheGuardTookLaterKeepsItsCredit(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	loadedIn(g, "T", "https://mail.example/", "https://mail.example")
	g.noteLoader("T", "L1")
	read := pageURL{tab: "T", doc: "L1", url: "https://mail.example/inbox"}
	took := make(chan struct{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		moveWithin(g, "T", read.url)
		close(took)
	}()
	g.settleRead(context.Background(), "T", read.doc, read.url)
	<-took
	moveWithin(g, "T", "https://mail.example/inbox/3")
	if got := s.shownPageURL(read); got != read.url {
		t.Errorf("the URL read is shown as %q, want %q", got, read.url)
	}
}

// TestAnErrorPagesURLIsCreditedAsItsLoad: a load the agent chose fails
// (the browser commits its error page, chrome-error://chromewebdata/,
// for the URL): the state line's URL, the one that failed, is shown.
func TestAnErrorPagesURLIsCreditedAsItsLoad(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	g := oneTabGuard(s)
	g.tab.Store("another tab") // T's commit is not the acting tab's
	u := "https://mail.example/down"
	g.loaderDocs("T", "f0", "n0", "", u)
	read := errorPage(g, "T", u, "L1")
	if got := s.shownPageURL(read); got != u {
		t.Errorf("the failed load's URL is shown as %q, want %q", got, u)
	}
}

// TestAnErrorPageWithNoLoadPausedIsNotKnown: the tab loaded a URL with a
// guess before; an error page commits at that URL with the value in it,
// no load of it paused: it is withheld, right guess or wrong, never
// credited by the earlier load.
func TestAnErrorPageWithNoLoadPausedIsNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	for _, guess := range []string{value, "Aa1-Bb2_Cc3-Dd4"} {
		g := oneTabGuard(s)
		g.tab.Store("another tab")
		c := "https://client.example/c"
		loadedIn(g, "T", c+"?token="+guess, "https://client.example")
		g.noteLoader("T", "L1")
		if got := s.shownPageURL(errorPage(g, "T", c+"?token="+value, "L2")); !strings.HasSuffix(got, urlWithheld) {
			t.Errorf("guess %s: the error page's URL is shown as %q, want withheld", guess, got)
		}
	}
}

// errorPage has g take the commit of the browser's error page for a load
// of u in tab that failed (loader id loader), as the guard's read loop
// does, and the state line read its URL; it returns the read.
func errorPage(g *targetGuard, tab, u, loader string) pageURL {
	params, err := json.Marshal(map[string]any{"frame": map[string]string{"id": tab, "url": "chrome-error://chromewebdata/",
		"unreachableUrl": u, "securityOrigin": "://", "loaderId": loader}})
	if err != nil {
		panic(err)
	}
	g.noteCommit(cdpMessage{Method: "Page.frameNavigated", Params: params})
	read := pageURL{tab: tab, doc: loader, url: u}
	g.settleRead(context.Background(), tab, read.doc, read.url)
	return read
}

package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestAURLReadFromADocumentTheGuardHasNotTakenIsNotKnown: the site sends
// the tab to the hostile page with the value, which moves itself to a
// path with the value in it; the page goes on to another of its pages,
// moves that one to the same path with a guess, and goes back in
// history: the browser restores the first page from its back/forward
// cache (no load paused). The state line reads the restored page's URL
// before the guard took the restore: it is not known, withheld, whatever
// the guess, until the guard takes it; then it is credited to the move
// (the site among its choosers). A read of a document the guard took is
// credited as the guard sees it.
func TestAURLReadFromADocumentTheGuardHasNotTakenIsNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	ctx := context.Background()
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

			g.settleRead(ctx, "T", "L2", c+in+"token="+guess)
			if _, ahead := g.links.ahead["T"]; ahead {
				t.Errorf("%s %s: a read of the document the guard took counts as ahead of it", in, guess)
			}
			g.settleRead(ctx, "T", "L1", restored) // the restore, not taken yet
			if got := s.shownURL("T", restored); !strings.HasSuffix(got, urlWithheld) {
				t.Errorf("value in %q, guess %s: the restored page's URL, read before the guard took it, is shown as %q", in, guess, got)
			}
			doc := withoutFragment(restored)
			g.frameCommitted("T", doc)
			g.urlCommitted("T", doc, strings.TrimPrefix(restored, doc), "https://hostile.example")
			g.noteLoader("T", "L1")
			if got := s.shownURL("T", restored); strings.Contains(got, value) {
				t.Errorf("value in %q, guess %s: the restored page's URL, once the guard took it, is shown as %q", in, guess, got)
			}
		}
	}
}

// TestAReadOfAFrameTheGuardKnowsNoCommitOfDoesNotWait: a tab whose
// commits the guard has not seen (one it attached to after its page
// loaded) is read as it is, without waiting for the guard.
func TestAReadOfAFrameTheGuardKnowsNoCommitOfDoesNotWait(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "T"}}
	g.settleRead(context.Background(), "T", "L9", "https://mail.example/")
	if _, ahead := g.links.ahead["T"]; ahead {
		t.Error("a read of a tab the guard saw no commit of counts as ahead of it")
	}
}

// TestALaterReadOfTheTabsDocumentShowsItsURLAgain: a read that raced a
// reload (it named the document before, which the guard no longer has)
// leaves the URL not known; the next read, of the document the guard
// took, shows it again. A read that could not name its document leaves
// its URL not known.
func TestALaterReadOfTheTabsDocumentShowsItsURLAgain(t *testing.T) {
	s := maskSession(t, testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4"))
	ctx := context.Background()
	g := oneTabGuard(s)
	u := "https://mail.example/inbox"
	loadedIn(g, "T", u, "https://mail.example")
	g.noteLoader("T", "L1")
	loadedIn(g, "T", u, "https://mail.example") // the reload
	g.noteLoader("T", "L2")
	g.settleRead(ctx, "T", "L1", u)
	if got := s.shownURL("T", u); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("a read of the document before the reload: shown as %q, want withheld", got)
	}
	g.settleRead(ctx, "T", "L2", u)
	if got := s.shownURL("T", u); got != u {
		t.Errorf("the next read, of the reloaded document: shown as %q", got)
	}
	g.settleRead(ctx, "T", "", u)
	if got := s.shownURL("T", u); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("a read that named no document: shown as %q, want withheld", got)
	}
}

// TestASettledReadLeavesAnotherURLReadAheadNotKnown: in one call the
// first read names a document the guard has already replaced (its URL
// not known); the read after the action names the guard's document and
// settles: the first URL stays not known, never credited as the new
// document is.
func TestASettledReadLeavesAnotherURLReadAheadNotKnown(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	s := maskSession(t, testkit.SecretManifest(t, value))
	ctx := context.Background()
	g := oneTabGuard(s)
	before, after := "https://client.example/c#token="+value, "https://client.example/c"
	loadedIn(g, "T", "https://client.example/cb", "https://client.example")
	g.noteLoader("T", "L1")
	loadedIn(g, "T", after, "https://client.example")
	g.noteLoader("T", "L2")
	g.settleRead(ctx, "T", "L1", before)
	g.settleRead(ctx, "T", "L2", after)
	if got := s.shownURL("T", before); !strings.HasSuffix(got, urlWithheld) {
		t.Errorf("the first read's URL is shown as %q, want withheld", got)
	}
	if got := s.shownURL("T", after); got != after {
		t.Errorf("the settled read's URL is shown as %q", got)
	}
}

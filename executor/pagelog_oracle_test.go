package executor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// committed records that frame id (a child of parent; "": the tab's main
// frame) committed a document of https://host.
func committed(l *pageLog, id, parent cdp.FrameID, host string) {
	if parent != "" {
		l.record(&page.EventFrameAttached{FrameID: id, ParentFrameID: parent})
	}
	l.record(&page.EventFrameNavigated{Frame: &cdp.Frame{ID: id, ParentID: parent, URL: "https://" + host + "/", SecurityOrigin: "https://" + host}})
}

// onHostilePage is a session whose manifest has secret PW (on
// login.example.com, value guessed), and the log of a tab on a hostile
// page off its domains.
func onHostilePage(t *testing.T) (*session, *pageLog, *toolclad.Manifest) {
	m := testkit.SecretManifest(t, guessed)
	l := newPageLog("main")
	committed(l, "main", "", "hostile.example.com")
	return maskSession(t, m), l, m
}

// guessed is the secret's value, which the hostile page guesses right.
const guessed = "Zq8-Lm2_Vx7-Kp4"

// request records a request of frame id to url, with the document URL
// the browser names: the URL a document load loads, the frame's document
// for a subresource.
func request(l *pageLog, id network.RequestID, frame cdp.FrameID, typ network.ResourceType, url string) {
	doc := url
	if typ != network.ResourceTypeDocument {
		doc = "https://" + l.docOf(frame) + "/"
	}
	l.record(&network.EventRequestWillBeSent{RequestID: id, FrameID: frame, Type: typ, DocumentURL: doc,
		Request: &network.Request{Method: "GET", URL: url}})
}

// TestARequestToTheSecretsSiteIsNoOracle: a hostile page off the
// secret's domains, where no secret was ever typed, sends its guesses to
// the secret's own site (in scope) in a request's URL. The log's entries
// are masked for where they were sent from, not where they went, so the
// right guess comes back as written, like the wrong one: the page learns
// nothing from the agent's reading its log.
func TestARequestToTheSecretsSiteIsNoOracle(t *testing.T) {
	s, l, _ := onHostilePage(t)
	s.observed("https://hostile.example.com/")
	for i, guess := range []string{"Aa1-Bb2_Cc3-Dd4", guessed} {
		request(l, network.RequestID(rune('a'+i)), "main", network.ResourceTypeFetch, "https://login.example.com/?g="+guess)
	}
	for i := range l.requests {
		r := *l.requests[i]
		s.shown(&r, nil)
		t.Logf("entry %d: %s", i, r.URL)
		if strings.Contains(r.URL, "[secret") || strings.Contains(r.URL, "[part of secret") {
			t.Errorf("a request the hostile page made tells its guess right: %q", r.URL)
		}
	}
}

// TestADocumentLoadIsMaskedForThePageThatStartedIt: a hostile page loads
// the secret's site, with a guess in the URL, in a frame and in the tab.
// The browser names the URL a document request loads as its document; the
// log masks it for the page that started it — the frame's parent, the
// tab's page before the load commits — so the guesses come back as
// written. The secret's page's own navigation off its domains is masked.
func TestADocumentLoadIsMaskedForThePageThatStartedIt(t *testing.T) {
	s, l, _ := onHostilePage(t)
	l.record(&page.EventFrameAttached{FrameID: "f1", ParentFrameID: "main"})
	request(l, "frame", "f1", network.ResourceTypeDocument, "https://login.example.com/?g="+guessed)
	committed(l, "f1", "main", "login.example.com") // the frame now shows the site
	request(l, "again", "f1", network.ResourceTypeDocument, "https://login.example.com/?g="+guessed)
	request(l, "tab", "main", network.ResourceTypeDocument, "https://login.example.com/?g="+guessed)
	committed(l, "main", "", "login.example.com")
	request(l, "away", "main", network.ResourceTypeDocument, "https://evil.example.com/?pw="+guessed)
	for i, want := range []bool{false, false, false, true} {
		r := *l.requests[i]
		s.shown(&r, nil)
		if strings.Contains(r.URL, "[secret PW]") != want {
			t.Errorf("document request %s: masked %v, want %v: %q", r.id, !want, want, r.URL)
		}
	}
}

// TestLogEntriesReadOnTheSecretsSiteAreNoOracle: the same guesses sent
// while the tab was on the hostile page, read after the agent has gone to
// the secret's site, come back as written: an entry is masked for the
// page it was logged on, not for the pages the call reads.
func TestLogEntriesReadOnTheSecretsSiteAreNoOracle(t *testing.T) {
	s, l, _ := onHostilePage(t)
	for i, guess := range []string{"Aa1-Bb2_Cc3-Dd4", guessed} {
		request(l, network.RequestID(rune('a'+i)), "main", network.ResourceTypeFetch, "https://hostile.example.com/?g="+guess)
	}
	s.egress.bound.Committed("login.example.com")
	committed(l, "main", "", "login.example.com")
	s.observed("https://login.example.com/")
	for i := range l.requests {
		r := *l.requests[i]
		s.shown(&r, nil)
		t.Logf("entry %d: %s", i, r.URL)
		if strings.Contains(r.URL, "[secret") {
			t.Errorf("a request the hostile page made, read from the secret's site, tells its guess right: %q", r.URL)
		}
	}
}

// TestARequestRefusedWhileASecretIsHeldElsewhereIsWithheld: a request the
// binding refused while it held a typed secret, from a document off the
// secret's domains (the secret's page's beacon as the tab left it, or a
// page's guess sent then), is shown with a fixed note instead of its
// texts: masked for the secret it would tell a guess apart, in clear it
// could show the value.
func TestARequestRefusedWhileASecretIsHeldElsewhereIsWithheld(t *testing.T) {
	s, l, m := onHostilePage(t)
	refused := map[string]Blocked{}
	for i, guess := range []string{"Aa1-Bb2_Cc3-Dd4", guessed} {
		url := "https://hostile.example.com/?g=" + guess
		request(l, network.RequestID(rune('a'+i)), "main", network.ResourceTypePing, url)
		l.record(&network.EventLoadingFailed{RequestID: network.RequestID(rune('a' + i)), ErrorText: "net::ERR_BLOCKED_BY_CLIENT"})
		refused[url] = Blocked{URL: url, Rule: ruleSecretBound, Held: []*toolclad.Secret{m.Secrets[0]}}
	}
	var shown []string
	for i := range l.requests {
		r := *l.requests[i]
		s.shown(&r, refused)
		shown = append(shown, r.URL+" "+r.Method)
	}
	if shown[0] != shown[1] || !strings.Contains(shown[0], requestWithheld) || strings.Contains(shown[0], "g=") {
		t.Errorf("the refused requests read %q and %q, not the same note", shown[0], shown[1])
	}
}

// TestAConsoleMessageIsMaskedForItsFramesDocument: the secret's site in a
// frame of a hostile page (the secret typed there) logs the value, and the
// hostile page logs its guess: each message is masked for the document of
// the execution context that logged it, so the frame's reads [secret PW]
// and the hostile page's comes back as written. A context the log learns
// of only as it begins (a tab attached later) names its document too.
func TestAConsoleMessageIsMaskedForItsFramesDocument(t *testing.T) {
	s, l, m := onHostilePage(t)
	s.egress.bound.Bind("login.example.com", []*toolclad.Secret{m.Secrets[0]}, s.secrets.Load())
	committed(l, "f1", "main", "login.example.com")
	for id, frame := range map[runtime.ExecutionContextID]cdp.FrameID{1: "main", 2: "f1", 3: "f2"} {
		origin := map[cdp.FrameID]string{"main": "https://hostile.example.com", "f1": "https://login.example.com", "f2": "https://login.example.com"}[frame]
		aux, _ := json.Marshal(map[string]any{"isDefault": true, "frameId": frame})
		l.record(&runtime.EventExecutionContextCreated{Context: &runtime.ExecutionContextDescription{ID: id, Origin: origin, UniqueID: fmt.Sprint(id), AuxData: aux}})
	}
	text, _ := json.Marshal("pw " + guessed)
	for _, id := range []runtime.ExecutionContextID{1, 2, 3} {
		l.record(&runtime.EventConsoleAPICalled{Type: runtime.ConsoleAPICalledTypeLog, ExecutionContextID: id,
			Args: []*runtime.RemoteObject{{Type: runtime.RemoteObjectTypeString, Value: text}}})
	}
	for i, want := range []bool{false, true, true} {
		c := l.console[i]
		mask, _ := s.logMask(c.logged)
		if got := mask(c.Text); strings.Contains(got, "[secret PW]") != want {
			t.Errorf("message %d: masked %v, want %v: %q", i, !want, want, got)
		}
	}
}

// TestTheOldPagesLastBeaconIsMaskedForIt: the page a secret was typed on
// sends the value off its domains as it unloads, and the browser reports
// the request after the next page, off the secret's domains, committed:
// the request names the old page as its document, and is masked for it.
func TestTheOldPagesLastBeaconIsMaskedForIt(t *testing.T) {
	s, l, _ := onHostilePage(t)
	committed(l, "main", "", "login.example.com")
	committed(l, "main", "", "app.example.com")
	l.record(&network.EventRequestWillBeSent{RequestID: "beacon", FrameID: "main", Type: network.ResourceTypePing,
		DocumentURL: "https://login.example.com/", Request: &network.Request{Method: "POST", URL: "https://app.example.com/?pw=" + guessed}})
	r := *l.requests[0]
	s.shown(&r, nil)
	if !strings.Contains(r.URL, "[secret PW]") {
		t.Errorf("the old page's beacon reads %q", r.URL)
	}
}

// TestARefusalIsShownForItsOwnRequestOnly: a request refused while the
// binding held the secret (its page's beacon with the value), and a later
// request of another page to the very same URL, which failed otherwise: a
// refusal is matched to the request interception refused, by its id, so
// the page's request is not shown withheld for the right guess only.
func TestARefusalIsShownForItsOwnRequestOnly(t *testing.T) {
	s, l, m := onHostilePage(t)
	url := "https://hostile.example.com/?g=" + guessed
	for _, id := range []network.RequestID{"1.1", "2.2"} {
		request(l, id, "main", network.ResourceTypeFetch, url)
		l.record(&network.EventLoadingFailed{RequestID: id, ErrorText: "net::ERR_FAILED"})
	}
	b := Blocked{URL: url, Request: "1.1", Rule: ruleSecretBound, Held: []*toolclad.Secret{m.Secrets[0]}}
	refused := map[string]Blocked{refusalKey(b.Request, b.URL): b}
	for i, want := range []bool{true, false} {
		r := *l.requests[i]
		s.shown(&r, refused)
		if (r.URL == requestWithheld) != want {
			t.Errorf("request %s reads %q", r.id, r.URL)
		}
	}
}

// TestALoadStartedByAPageTheGuardHasNotTakenIsCreditedToIt: the agent
// leaves the secret's site for a hostile page whose first bytes embed the
// site with a guess; the tab's log hears of the frame's load before the
// guard takes the hostile page's commit: the load is credited to the
// hostile page too (as the log knows the parent now), so the right guess
// is shown as the wrong one is.
func TestALoadStartedByAPageTheGuardHasNotTakenIsCreditedToIt(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "main"}}
	g.frameCommitted("main", "https://login.example.com/account") // the guard's last word on the tab
	l := newPageLog("main")
	l.followGuard(g)
	committed(l, "main", "", "hostile.example.com")
	l.record(&page.EventFrameAttached{FrameID: "F", ParentFrameID: "main"})
	request(l, "r", "F", network.ResourceTypeDocument, "https://login.example.com/?g="+guessed)
	if docs := l.requests[0].docs; docs != nil && !slices.Contains(docs, "hostile.example.com") {
		t.Errorf("the frame's load is credited to %v, want the hostile page among them", docs)
	}
}

// TestALoadStartedByAnotherPageOfTheGroupIsCreditedAsTheGuardPausedIt:
// the site's popup goes to a hostile page, whose first bytes send its
// opener (the site's tab) to the site with a guess; the tab's log hears
// of the load before the guard took the popup's commit. Until the guard
// paused the load the entry is withheld; then it is credited as the
// guard credited it (the hostile page among them), so the right guess is
// shown as a wrong one is.
func TestALoadStartedByAnotherPageOfTheGroupIsCreditedAsTheGuardPausedIt(t *testing.T) {
	g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
		pages: map[string]string{"s1": "main", "s2": "W"}}
	loadedIn(g, "main", "https://login.example.com/account", "https://login.example.com")
	attachPage(g, targetInfo{TargetID: "W", Type: "page", OpenerID: "main"})
	g.frameCommitted("W", "https://login.example.com/help") // the guard's last word on the popup
	l := newPageLog("main")
	l.followGuard(g)
	committed(l, "main", "", "login.example.com")
	u := "https://login.example.com/?g=" + guessed
	request(l, "r", "main", network.ResourceTypeDocument, u)
	if c := settled(l.requests[0]); !c.unknown {
		t.Errorf("before the guard paused it, the load is credited to %v", c.docs)
	}
	g.frameCommitted("W", "https://hostile.example.com/") // the guard takes the popup's commit, then pauses the load
	g.loaderDocs("main", "fetch-r", "r", "", u)
	l.settle()
	if c := settled(l.requests[0]); c.unknown || !slices.Contains(c.docs, "hostile.example.com") {
		t.Errorf("once the guard paused it, the load is credited to %v (not known: %v), want the hostile page among them", c.docs, c.unknown)
	}
}

// TestALogEntryTakesTheGuardsCreditBeforeTheGuardForgetsIt: the log
// hears of a page's load before the guard pauses it; many document loads
// in other tabs later, a reply reads the tab's log: the entry has the
// guard's credit, not withheld — whether the tab's next request (as the
// log records it) or the reply took it.
func TestALogEntryTakesTheGuardsCreditBeforeTheGuardForgetsIt(t *testing.T) {
	for _, last := range []bool{false, true} {
		g := &targetGuard{frames: map[string]string{}, frameParents: map[string]string{}, replaced: map[string]replacedDoc{},
			pages: map[string]string{"s1": "main"}}
		loadedIn(g, "main", "https://mail.example.com/", "https://mail.example.com")
		l := newPageLog("main")
		l.followGuard(g)
		committed(l, "main", "", "mail.example.com")
		u := "https://mail.example.com/inbox"
		request(l, "r", "main", network.ResourceTypeDocument, u)
		g.loaderDocs("main", "fetch-r", "r", "", u)
		if !last {
			request(l, "s", "main", network.ResourceTypeScript, "https://mail.example.com/app.js")
		}
		for i := range 4 * maxLinks {
			g.loaderDocs("other", fmt.Sprint("x", i), fmt.Sprint("y", i), "", fmt.Sprint("https://ads.example/", i))
		}
		l.settle()
		if c := settled(l.requests[0]); c.unknown || !slices.Equal(c.docs, []string{"mail.example.com"}) {
			t.Errorf("the tab's last request %v: the page's load is credited to %v (not known: %v), want [mail.example.com]", last, c.docs, c.unknown)
		}
	}
}

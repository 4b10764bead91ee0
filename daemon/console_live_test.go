package daemon

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/toolclad"
)

// TestConsoleShowsArgumentsAsWritten: a held call's arguments are shown
// as the agent wrote them, escaped for HTML by the template: <PORTAL_PW>
// and & appear as &lt;PORTAL_PW&gt; and &amp;, never as JSON's
// \u003c…\u003e, and never as markup.
func TestConsoleShowsArgumentsAsWritten(t *testing.T) {
	t.Parallel()
	f, broker, _ := consoleFront(t)
	b := &browser{t: t, base: f.URL()}
	_, h, _ := b.do("POST", "/console/login", url.Values{"token": {olgaToken}}, nil)
	home := h.Get("Location")
	broker.Open(approval.Request{Session: "s1", Tool: "t.type_text", Command: "type_text",
		Args: map[string]any{"selector": "#pw", "text": "<PORTAL_PW> & <b>bold</b>"}, Why: []string{"policy p"}}, time.Minute)
	_, _, page := b.do("GET", home, nil, nil)
	if !strings.Contains(page, `&#34;text&#34;: &#34;&lt;PORTAL_PW&gt; &amp; &lt;b&gt;bold&lt;/b&gt;&#34;`) {
		t.Errorf("the arguments are not shown as written:\n%s", page)
	}
	if strings.Contains(page, `\u003c`) || strings.Contains(page, "<b>bold") {
		t.Errorf("the arguments are shown as JSON's escapes or as markup:\n%s", page)
	}
}

// TestConsoleEndsASession: the End button's POST needs the CSRF token
// and the console's own origin; it ends the session for the signed-in
// operator (the daemon's EndSession is called with the session and the
// operator's name), and the session shows as ended, with why, at once;
// an error from EndSession is shown, not taken for an end.
func TestConsoleEndsASession(t *testing.T) {
	t.Parallel()
	ops, err := toolclad.ParseOperators("ops", []byte("olga:"+olgaToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	hub := events.NewHub(0)
	var mu sync.Mutex
	var ended []string
	f := serve(t, Config{Agents: func() *toolclad.Agents { return nil }, Operators: func() *toolclad.Operators { return ops },
		Events: hub, Broker: approval.NewBroker(nil),
		EndSession: func(id, operator string) error {
			if id == "gone" {
				return errors.New("no open session with that id: gone")
			}
			if id == "unrecorded" {
				return fmt.Errorf("%w: evidence log: disk full", ErrEndNotRecorded)
			}
			mu.Lock()
			ended = append(ended, id+" by "+operator)
			mu.Unlock()
			return nil
		}})
	for f.console.live == nil || hub.Watchers() == 0 {
		time.Sleep(time.Millisecond) // the view watches the hub
	}
	hub.Publish(events.Event{Type: events.SessionOpened, Session: "s1", Agent: "alice", Tool: "t"})
	f.console.live.caughtUp(1, time.Minute)

	b := &browser{t: t, base: f.URL()}
	_, h, _ := b.do("POST", "/console/login", url.Values{"token": {olgaToken}}, nil)
	home := h.Get("Location")
	_, _, page := b.do("GET", home, nil, nil)
	csrf := between(page, `name="csrf" value="`, `"`)
	if !strings.Contains(page, home+"sessions/s1/end") || !strings.Contains(page, ">End session</button>") {
		t.Fatalf("no End button for the open session:\n%s", page)
	}
	end := home + "sessions/s1/end"
	if code, _, _ := b.do("POST", end, url.Values{}, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusForbidden {
		t.Errorf("end without the CSRF token: %d, want 403", code)
	}
	if code, _, _ := b.do("POST", end, url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.1:1"}); code != http.StatusForbidden {
		t.Errorf("end from another origin: %d, want 403", code)
	}
	anon := &browser{t: t, base: f.URL()}
	if code, _, _ := anon.do("POST", end, url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusUnauthorized {
		t.Errorf("end without the sign-in's cookie: %d, want 401", code)
	}
	// The End button's POST asks again: a click that was meant for
	// something else ends nothing.
	if code, _, body := b.do("POST", end, url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusOK ||
		!strings.Contains(body, "End session <code>s1</code>?") || !strings.Contains(body, `name="confirm" value="yes"`) || !strings.Contains(body, `action="`+end+`"`) {
		t.Errorf("End without confirming: %d, want 200 and a page that asks again:\n%s", code, body)
	}
	mu.Lock()
	if len(ended) != 0 {
		t.Errorf("a refused or unconfirmed request ended a session: %v", ended)
	}
	mu.Unlock()
	confirmed := url.Values{"csrf": {csrf}, "confirm": {"yes"}}
	if code, h, _ := b.do("POST", end, confirmed, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusSeeOther || h.Get("Location") != home {
		t.Errorf("end: %d %q", code, h.Get("Location"))
	}
	mu.Lock()
	if len(ended) != 1 || ended[0] != "s1 by olga" {
		t.Errorf("EndSession calls: %v, want [s1 by olga]", ended)
	}
	mu.Unlock()
	_, _, page = b.do("GET", home, nil, nil)
	if !strings.Contains(page, "<b>ended</b>") || !strings.Contains(page, "the operator olga ended it (console)") || strings.Contains(page, home+"sessions/s1/end") {
		t.Errorf("the ended session is not shown as ended by olga, or still has its button:\n%s", page)
	}
	code, _, body := b.do("POST", home+"sessions/gone/end", confirmed, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if code != http.StatusConflict || !strings.Contains(body, "no open session with that id") {
		t.Errorf("ending a session that is not open: %d %q, want 409 saying why", code, body)
	}
	// Ended, but the evidence log did not take the record: ended, with a
	// warning, not "could not be ended".
	hub.Publish(events.Event{Type: events.SessionOpened, Session: "unrecorded", Agent: "alice", Tool: "t"})
	f.console.live.caughtUp(hub.Seq(), time.Minute)
	code, _, body = b.do("POST", home+"sessions/unrecorded/end", confirmed, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if code != http.StatusOK || !strings.Contains(body, "Session <code>unrecorded</code> has ended") || !strings.Contains(body, "could not be written to the evidence log") ||
		!strings.Contains(body, "disk full") || strings.Contains(body, "could not be ended") {
		t.Errorf("a session ended whose end was not recorded: %d, want 200 saying it ended, with the warning:\n%s", code, body)
	}
	_, _, page = b.do("GET", home, nil, nil)
	if !strings.Contains(page, `id="session-unrecorded" data-key="unrecorded"`) || strings.Contains(page, home+"sessions/unrecorded/end") {
		t.Errorf("the session ended unrecorded is still shown open:\n%s", page)
	}
}

// TestFrontHome: / is a page of links (the console's sign-in, the health
// check) with a CSP and no script, not a 404; other unknown paths are
// still 404.
func TestFrontHome(t *testing.T) {
	t.Parallel()
	f, _, _ := consoleFront(t)
	b := &browser{t: t, base: f.URL()}
	code, h, page := b.do("GET", "/", nil, nil)
	if code != 200 || !strings.Contains(page, `href="/console/login"`) || !strings.Contains(page, `href="/healthz"`) || strings.Contains(page, "<script") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("/: %d, CSP %q\n%s", code, h.Get("Content-Security-Policy"), page)
	}
	if code, _, _ := b.do("GET", "/nothing-here", nil, nil); code != http.StatusNotFound {
		t.Errorf("/nothing-here: %d, want 404", code)
	}
	bare := serve(t, Config{Agents: func() *toolclad.Agents { return nil }})
	_, _, page = (&browser{t: t, base: bare.URL()}).do("GET", "/", nil, nil)
	if strings.Contains(page, `href="/console/login"`) || !strings.Contains(page, "--operator-token-file") {
		t.Errorf("/ without operators links to a console that is not served:\n%s", page)
	}
}

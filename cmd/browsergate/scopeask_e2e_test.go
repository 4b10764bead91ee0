package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
)

// askManifest asks a human about public hosts outside allowed_domains
// ([browser.scope] ask_external). The "public" site the tests approve is
// served on 11.0.0.5, a globally reachable address, inside a private
// network namespace whose one interface is lo (inNetns): serve --resolve
// maps its names there, and the egress proxy dials an approved host only
// at a global address. 127.0.0.5 is granted (for allowed_domains, as a
// manifest might grant an intranet) to show that an approval never
// reaches a granted private address; the canary's 127.0.0.2 is granted to
// nothing.
const askManifest = `
[tool]
name = "ask"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.5/32"]
# Names are held to allowed_ports; the test servers listen on high ports.
allowed_ports = ["1024-65535"]
ask_external = true
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
`

// outsideSite is the site outside the scope: one server, on ip (11.0.0.5
// inside a network namespace, or the granted 127.0.0.5), answering every
// name the test maps there, and counting each request by the host it was
// sent to.
type outsideSite struct {
	port string
	mu   sync.Mutex
	hits map[string][]string // host (without port) -> paths requested
}

func serveOutside(t *testing.T, ip string) *outsideSite {
	t.Helper()
	o := &outsideSite{hits: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		third := "http://third.test:" + o.port
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>Outside news</title><h1>Outside news</h1>
<img src="/pixel.gif" alt="own pixel"><img src="%s/pixel.gif" alt="third pixel">
<p><a href="/second">Second story</a> <a href="%s/">Third site</a></p>`, third, third)
		case "/second":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>Second story</title><p>The second story.</p>`)
		case "/redirect":
			http.Redirect(w, r, third+"/landing", http.StatusFound)
		case "/pixel.gif":
			w.Header().Set("Content-Type", "image/gif")
			w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
		default:
			http.NotFound(w, r)
		}
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		o.mu.Lock()
		o.hits[host] = append(o.hits[host], r.URL.Path)
		o.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
	base, stop, err := serveOn(ip+":0", h)
	if err != nil {
		t.Fatalf("the outside site on %s: %v", ip, err)
	}
	t.Cleanup(stop)
	o.port = base[strings.LastIndex(base, ":")+1:]
	return o
}

// requests are the paths requested of host so far.
func (o *outsideSite) requests(host string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.hits[host]...)
}

func (o *outsideSite) url(host, path string) string {
	return "http://" + host + ":" + o.port + path
}

// publicSite is the globally reachable address of the outside site, on lo
// inside a private network namespace (inNetns).
const publicSite = "11.0.0.5"

// startAsk starts serve with askManifest, the outside site on ip and the
// names outside.test and third.test mapped to it.
func startAsk(t *testing.T, ip string, serveArgs ...string) (*fixture, *outsideSite) {
	t.Helper()
	return startAskClient(t, nil, ip, serveArgs...)
}

// startAskClient is startAsk with options for the MCP client.
func startAskClient(t *testing.T, opts *mcp.ClientOptions, ip string, serveArgs ...string) (*fixture, *outsideSite) {
	t.Helper()
	o := serveOutside(t, ip)
	f := startClient(t, askManifest, opts, append([]string{
		"--resolve", "outside.test=" + ip,
		"--resolve", "third.test=" + ip,
		"--resolve", "private.test=127.0.0.2",
	}, serveArgs...)...)
	return f, o
}

// TestAskOutsideScopeApproved: a navigate to a public host outside
// allowed_domains is held; the operator's list shows the exact URL and
// that it leaves the scope; nothing reaches the host before the approval.
// Approved with `browsergate approvals approve`, the page loads with its
// own subresources, while a subresource and a link to yet another host
// stay refused (the refusal says navigate would ask); the origin stays
// reachable for the session (a snapshot, a link within it). The evidence
// records the hold and the approval.
func TestAskOutsideScopeApproved(t *testing.T) {
	t.Parallel()
	if !inNetns(t, []string{publicSite + "/32"}, "") {
		return
	}
	f, o := startAsk(t, publicSite)
	f.mustAllow(t, "ask.navigate", map[string]any{"url": f.siteURL + "/docs"})
	target := o.url("outside.test", "/")

	h := f.callAsync(t, "ask.navigate", map[string]any{"url": target})
	id := f.pendingID(t, h)
	out, err := f.approvals(t, "list")
	for _, want := range []string{`call:   ask.navigate {"url":"` + target + `"}`, "leads:  " + target,
		"navigate to " + target + " leaves the scope: host outside.test matches no allowed_domains entry",
		"once approved, http://outside.test:" + o.port + " is reachable for this session"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("approvals list lacks %q (%v):\n%s", want, err, out)
		}
	}
	if got := o.requests("outside.test"); len(got) != 0 {
		t.Fatalf("the outside host saw %v before anyone approved", got)
	}
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil || !strings.Contains(out, "approved by alice") {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	if refused || !strings.Contains(text, `title="Outside news"`) {
		t.Fatalf("the approved navigate did not load the page:\n%s", text)
	}
	if got := o.requests("outside.test"); !slices.Contains(got, "/") || !slices.Contains(got, "/pixel.gif") {
		t.Errorf("the approved origin's page and its own subresource were not loaded: %v", got)
	}
	if !strings.Contains(text, "third.test") || !strings.Contains(text, "call navigate with its URL") {
		t.Errorf("the refused third-host subresource is not reported with how to ask:\n%s", text)
	}

	// The origin stays reachable: the next call is on a page in scope, and
	// a link within the origin is followed.
	snap := f.mustAllow(t, "ask.snapshot", nil)
	if second := findRef(snap, "Second story"); second == "" {
		t.Fatalf("no ref for the second story:\n%s", snap)
	} else if out := f.mustAllow(t, "ask.click", map[string]any{"ref": second}); !strings.Contains(out, `title="Second story"`) {
		t.Errorf("the link within the approved origin did not lead there:\n%s", out)
	}
	// Back on the first page of the approved origin (a navigate there is
	// asked about again), its link to yet another host is refused before
	// the click, and the refusal says how to ask.
	f.mustAllow(t, "ask.navigate", map[string]any{"url": f.siteURL + "/docs"})
	back := f.callAsync(t, "ask.navigate", map[string]any{"url": target})
	if out, err := f.approvals(t, "approve", f.pendingID(t, back)); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	if text, refused := back.wait(t); refused {
		t.Fatalf("the second approved navigate was refused:\n%s", text)
	}
	snap = f.mustAllow(t, "ask.snapshot", nil)
	third := findRef(snap, "Third site")
	if third == "" {
		t.Fatalf("no ref for the third site's link:\n%s", snap)
	}
	f.mustRefuse(t, "ask.click", map[string]any{"ref": third}, "DENIED at scope", "third.test", "call navigate with that URL")
	if got := o.requests("third.test"); len(got) != 0 {
		t.Errorf("LEAK: third.test, never approved, saw %v", got)
	}

	f.loggedApprovals(t) // ends the session
	rec := lastRecordWhere(t, f.evidence, func(e *evidence.Envelope) bool {
		return e.Command == "navigate" && e.Decision.Approval != nil && e.Decision.Approval.ID == id
	})
	if rec == nil || !rec.Decision.Allowed || !rec.Decision.Approval.Approved || !strings.HasPrefix(rec.Decision.Approval.By, "alice") ||
		!strings.Contains(rec.Decision.Scope, "ask_external") || !strings.Contains(rec.Decision.Scope, id) ||
		!strings.Contains(rec.Decision.Scope, "http://outside.test:"+o.port) {
		t.Fatalf("the approved navigate's record: %+v", rec)
	}
}

// TestAskOutsideScopeDenied: a navigate outside allowed_domains the
// operator denies is refused at stage approval, the host sees nothing,
// and the evidence records the hold (why: the URL leaves the scope) and
// the denial.
func TestAskOutsideScopeDenied(t *testing.T) {
	t.Parallel()
	f, o := startAsk(t, "127.0.0.5")
	target := o.url("outside.test", "/")
	h := f.callAsync(t, "ask.navigate", map[string]any{"url": target})
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "deny", id, "--by", "bob", "--note", "not that site"); err != nil {
		t.Fatalf("approvals deny: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	if !refused || !strings.Contains(text, "DENIED at approval") || !strings.Contains(text, "denied via operator by bob") || !strings.Contains(text, "leaves the scope") {
		t.Fatalf("the denied navigate:\n%s", text)
	}
	if got := o.requests("outside.test"); len(got) != 0 {
		t.Fatalf("LEAK: the denied host saw %v", got)
	}
	as := f.loggedApprovals(t)
	if len(as) != 1 || as[0].Approved || as[0].ID != id || as[0].Channel != "operator" {
		t.Fatalf("evidence approvals = %+v", as)
	}
	rec := lastRecordWhere(t, f.evidence, func(e *evidence.Envelope) bool { return e.Decision.Approval != nil && e.Decision.Approval.ID == id })
	if rec == nil || rec.Decision.Allowed || rec.Decision.Stage != evidence.StageApproval || rec.Decision.Scope != "not in allowed_domains (ask_external)" ||
		len(rec.Decision.Reasons) != 1 || !strings.Contains(rec.Decision.Reasons[0], "navigate to "+target+" leaves the scope") {
		t.Fatalf("the denied navigate's record: %+v", rec)
	}
}

// TestAskOutsideScopeRedirectLeaves: an approval covers its origin, not
// where the server sends the browser next: a redirect from the approved
// URL to yet another host is refused, the other host sees nothing, and
// the reply says navigate would ask for it.
func TestAskOutsideScopeRedirectLeaves(t *testing.T) {
	t.Parallel()
	if !inNetns(t, []string{publicSite + "/32"}, "") {
		return
	}
	f, o := startAsk(t, publicSite)
	h := f.callAsync(t, "ask.navigate", map[string]any{"url": o.url("outside.test", "/redirect")})
	if out, err := f.approvals(t, "approve", f.pendingID(t, h)); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	text, _ := h.wait(t)
	if !slices.Contains(o.requests("outside.test"), "/redirect") {
		t.Fatalf("the approved URL was not requested: %v\n%s", o.requests("outside.test"), text)
	}
	if got := o.requests("third.test"); len(got) != 0 {
		t.Fatalf("LEAK: the redirect's target, never approved, saw %v\n%s", got, text)
	}
	if !strings.Contains(text, "third.test") || !strings.Contains(text, "ask_external") {
		t.Errorf("the refused redirect is not reported with how to ask:\n%s", text)
	}
}

// TestAskOutsideScopeNeverForPrivate: a private address is refused at once
// and never held, whatever the operator would approve; a public-looking
// name that resolves to it is held, but approved, the egress proxy still
// refuses the address. The canary on 127.0.0.2 sees nothing while an
// operator approves every held call.
func TestAskOutsideScopeNeverForPrivate(t *testing.T) {
	t.Parallel()
	f, _ := startAsk(t, "127.0.0.5")
	ctx, cancel := context.WithCancel(context.Background())
	operatorDone := make(chan struct{})
	stop := func() { cancel(); <-operatorDone }
	defer stop()
	approved := make(chan string, 16)
	go func() {
		// An operator who approves anything.
		defer close(operatorDone)
		for ctx.Err() == nil {
			out, _ := f.approvals(t, "list")
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "apr-") {
					id := strings.Fields(line)[0]
					if _, err := f.approvals(t, "approve", id, "--by", "anyone"); err == nil {
						approved <- id
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	canaryPort := f.canaryTo[strings.LastIndex(f.canaryTo, ":")+1:]
	for _, u := range []string{f.canaryTo + "/", "http://2130706434:" + canaryPort + "/", "http://[::ffff:127.0.0.2]:" + canaryPort + "/",
		"http://localhost:" + canaryPort + "/", "http://[::1]:" + canaryPort + "/"} {
		f.mustRefuse(t, "ask.navigate", map[string]any{"url": u}, "DENIED at scope", "no human is asked")
	}
	// Names public DNS does not answer, whatever a local resolver would
	// make of them, are refused as such, never held either.
	for _, u := range []string{"http://intranet:" + canaryPort + "/", "http://metadata.google.internal/computeMetadata/v1/",
		"http://printer.local:" + canaryPort + "/", "http://nas.home.arpa:" + canaryPort + "/"} {
		f.mustRefuse(t, "ask.navigate", map[string]any{"url": u}, "DENIED at scope", "never put to a human", "no human is asked")
	}
	if len(approved) != 0 {
		t.Fatalf("a call to a private address was held for approval: %d approved", len(approved))
	}
	text, _ := f.call(t, "ask.navigate", map[string]any{"url": "http://private.test:" + canaryPort + "/"})
	if len(approved) != 1 {
		t.Errorf("the public-looking name was not held (approved %d):\n%s", len(approved), text)
	}
	if !strings.Contains(text, "egress gate blocked") || !strings.Contains(text, "proxy") {
		t.Errorf("the proxy did not report refusing the approved name's private address:\n%s", text)
	}
	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("LEAK: the canary on 127.0.0.2 saw %d request(s): %v", n, f.canary.Seen())
	}
}

// TestAskOutsideScopeNotByTheClient: leaving the scope is decided by the
// operator only: with --elicitation on and a client that would accept
// anything, the client is never asked, the navigate waits for the
// operator, and with no answer it is refused and the host sees nothing.
func TestAskOutsideScopeNotByTheClient(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := 0
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked++
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved_by": "the agent"}}, nil
	}}
	f, o := startAskClient(t, opts, "127.0.0.5", "--elicitation", "--approval-timeout", "3s")
	f.mustRefuse(t, "ask.navigate", map[string]any{"url": o.url("outside.test", "/")}, "DENIED at approval", "nobody approved")
	mu.Lock()
	n := asked
	mu.Unlock()
	if n != 0 {
		t.Errorf("the MCP client was asked %d time(s) to approve leaving the scope", n)
	}
	if got := o.requests("outside.test"); len(got) != 0 {
		t.Fatalf("LEAK: the host nobody approved saw %v", got)
	}
}

// TestAskOutsideScopeApprovedNameNeverReachesAGrant: a public-looking name
// outside allowed_domains that resolves to a private address the manifest
// grants (127.0.0.5, for allowed_domains) is held, and approved, the
// egress proxy refuses its address all the same: what the operator
// approved is a public host, and no grant is lifted for it. The site on
// 127.0.0.5 sees no request; the reply names the refusal.
func TestAskOutsideScopeApprovedNameNeverReachesAGrant(t *testing.T) {
	t.Parallel()
	f, o := startAsk(t, "127.0.0.5")
	h := f.callAsync(t, "ask.navigate", map[string]any{"url": o.url("outside.test", "/")})
	if out, err := f.approvals(t, "approve", f.pendingID(t, h), "--by", "alice"); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	text, _ := h.wait(t)
	if got := o.requests("outside.test"); len(got) != 0 {
		t.Fatalf("LEAK: the approved name reached the granted 127.0.0.5: %v\n%s", got, text)
	}
	if strings.Contains(text, "Outside news") || !strings.Contains(text, "outside.test") || !strings.Contains(text, "approved origin, address not global") {
		t.Errorf("the reply does not report the proxy refusing the approved name's private address:\n%s", text)
	}
	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("LEAK: the canary on 127.0.0.2 saw %d request(s): %v", n, f.canary.Seen())
	}
}

// TestAskOutsideScopeRefusedInTheUsersContext: live mode's user context
// has no egress proxy to check an approved host's addresses, so check
// refuses a manifest that asks there, at the key, saying to use context =
// "isolated"; the same manifest with context = "isolated" is accepted.
func TestAskOutsideScopeRefusedInTheUsersContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const body = "[tool]\nname = \"live\"\n[browser]\nconnect = \"live\"\n%s[browser.scope]\nallowed_domains = [\"docs.example.com\"]\nask_external = true\n[browser.commands.navigate]\nargs.url = { type = \"url\", scope_check = true }\n"
	user, isolated := filepath.Join(dir, "user.toml"), filepath.Join(dir, "isolated.toml")
	if err := os.WriteFile(user, []byte(fmt.Sprintf(body, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(isolated, []byte(fmt.Sprintf(body, "context = \"isolated\"\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "check", "--policies", repoPath("policies"), "--manifest", user)
	for _, want := range []string{user + ":7:1: browser.scope.ask_external", "needs the session's egress proxy", `context = "user"`, `write context = "isolated"`} {
		if code == 0 || !strings.Contains(out, want) {
			t.Errorf("check of an asking manifest in the user's context: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if out, code := runBinary(t, "check", "--policies", repoPath("policies"), "--manifest", isolated); code != 0 {
		t.Errorf("check of the same manifest with context = \"isolated\": exit %d\n%s", code, out)
	}
}

package daemon

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/toolclad"
)

const olgaToken = "14f2844098435e55ef4e6d4b538854a3"

// consoleFront serves the console for operator olga, with a broker and an
// event hub; ops swaps the operator file in force (a reload).
func consoleFront(t *testing.T) (*Front, *approval.Broker, *atomic.Pointer[toolclad.Operators]) {
	t.Helper()
	return consoleFrontAt(t, nil)
}

// consoleFrontAt is consoleFront with the console's clock (nil: time.Now).
func consoleFrontAt(t *testing.T, now func() time.Time) (*Front, *approval.Broker, *atomic.Pointer[toolclad.Operators]) {
	t.Helper()
	ops, err := toolclad.ParseOperators("ops", []byte("olga:"+olgaToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var cur atomic.Pointer[toolclad.Operators]
	cur.Store(ops)
	broker := approval.NewBroker(nil)
	f := serve(t, Config{Agents: func() *toolclad.Agents { return nil },
		Operators: cur.Load, Events: events.NewHub(0), Broker: broker, AllowedOrigins: []string{"http://app.example"}, Now: now})
	return f, broker, &cur
}

// browser is a client that keeps cookies and does not follow redirects.
type browser struct {
	t      *testing.T
	base   string
	cookie *http.Cookie
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) (int, http.Header, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if b.cookie != nil {
		req.AddCookie(b.cookie)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	for _, ck := range res.Cookies() {
		if ck.Name == consoleCookie {
			b.cookie = ck
		}
	}
	return res.StatusCode, res.Header, string(data)
}

// TestConsoleSignIn: a wrong token is refused; the right one gives a
// cookie for /console/ and a path key; the pages need both; the CSRF token and the console's own
// origin are needed to answer a held call, which is recorded as the
// console's with the operator's name; the sign-in ends when the token
// leaves the operator file; the console's event stream is the console's
// own pages' only.
func TestConsoleSignIn(t *testing.T) {
	f, broker, ops := consoleFront(t)
	b := &browser{t: t, base: f.URL()}
	if code, _, _ := b.do("POST", "/console/login", url.Values{"token": {"wrong-token-0123456789abcdef"}}, nil); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	code, h, _ := b.do("POST", "/console/login", url.Values{"token": {olgaToken}}, nil)
	home := h.Get("Location")
	if code != http.StatusSeeOther || !strings.HasPrefix(home, "/console/s/") || b.cookie == nil {
		t.Fatalf("sign-in: %d %q %v", code, home, b.cookie)
	}
	if b.cookie.Path != "/console/" || !b.cookie.HttpOnly || b.cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("the cookie: %+v", b.cookie)
	}
	code, _, page := b.do("GET", home, nil, nil)
	if code != 200 || !strings.Contains(page, "signed in as <b>olga</b>") {
		t.Fatalf("the console: %d\n%s", code, page)
	}
	for _, path := range []string{"/console/", "/console/s/" + strings.Repeat("0", 64) + "/"} {
		if code, h, _ := b.do("GET", path, nil, nil); code != http.StatusSeeOther || h.Get("Location") != "/console/login" {
			t.Errorf("%s with the cookie: %d %q, want the sign-in form", path, code, h.Get("Location"))
		}
	}
	anon := &browser{t: t, base: f.URL()}
	if code, h, _ := anon.do("GET", home, nil, nil); code != http.StatusSeeOther || h.Get("Location") != "/console/login" {
		t.Errorf("the path key without the cookie: %d %q", code, h.Get("Location"))
	}

	p := broker.Open(approval.Request{Session: "s1", Agent: "alice", Tool: "t.execute_js", Command: "execute_js",
		Args: map[string]any{"expression": "1+1\u202e"}, Why: []string{"policy p"},
		Page: "https://a.example/\x1b[2J\u009b31m", URL: "https://a.example/\u200bpay"}, time.Minute)
	_, _, page = b.do("GET", home, nil, nil)
	csrf := between(page, `name="csrf" value="`, `"`)
	if !strings.Contains(page, p.ID) || !strings.Contains(page, `\u202E`) || !strings.Contains(page, `https://a.example/\u001B[2J\u009B31m`) ||
		!strings.Contains(page, `https://a.example/\u200Bpay`) || strings.ContainsAny(page, "\u202e\x1b\u009b\u200b") {
		t.Errorf("the held call is not shown as it is, hidden characters escaped:\n%s", page)
	}
	approve := url.Values{"decision": {"approve"}}
	if code, _, _ := b.do("POST", home+"approvals/"+p.ID, approve, nil); code != http.StatusForbidden {
		t.Errorf("approve without the CSRF token: %d", code)
	}
	approve.Set("csrf", csrf)
	if code, _, _ := b.do("POST", home+"approvals/"+p.ID, approve, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}); code != http.StatusForbidden {
		t.Errorf("approve from another origin: %d", code)
	}
	if p.Answered() {
		t.Fatal("a refused request answered the held call")
	}
	if code, h, _ := b.do("POST", home+"approvals/"+p.ID, approve, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusSeeOther || h.Get("Location") != home {
		t.Errorf("approve: %d %q", code, h.Get("Location"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if o := p.Wait(ctx); !o.Approved || o.Channel != approval.ChannelConsole || o.By != "olga" {
		t.Errorf("the outcome: %+v", o)
	}

	if code, _, _ := b.do("GET", home+"events", nil, map[string]string{"Origin": "http://app.example"}); code != http.StatusForbidden {
		t.Errorf("the console's events from an allowed origin's page: %d, want 403", code)
	}

	other, _ := toolclad.ParseOperators("ops", []byte("pat:3568ea037310a8911a19f7de747de548\n"))
	ops.Store(other)
	if code, h, _ := b.do("GET", home, nil, nil); code != http.StatusSeeOther || h.Get("Location") != "/console/login" {
		t.Errorf("after olga's token left the file: %d %q", code, h.Get("Location"))
	}
}

// TestConsoleRightTokenSignsInAfterWrongOnes: every agent connects from
// loopback, as the operator does, so the back-off after wrong tokens is
// by an address they share. With the console's clock stopped (no wait
// ever ends), wrong tokens from the address are answered 429 with
// Retry-After, each a failure again, the wait growing; the right token
// signs in all the same, at once, as often as it comes; and it does not
// reset the back-off for the wrong ones that follow.
func TestConsoleRightTokenSignsInAfterWrongOnes(t *testing.T) {
	t.Parallel()
	stopped := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f, _, _ := consoleFrontAt(t, func() time.Time { return stopped })
	agent := &browser{t: t, base: f.URL()}
	wrong := url.Values{"token": {"wrong-token-0123456789abcdef"}}
	if code, _, _ := agent.do("POST", "/console/login", wrong, nil); code != http.StatusUnauthorized {
		t.Fatalf("the first wrong token: %d, want 401", code)
	}
	var waits []string
	for range 6 {
		code, h, _ := agent.do("POST", "/console/login", wrong, nil)
		if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
			t.Fatalf("a wrong token while the address must wait: %d (Retry-After %q), want 429 with Retry-After", code, h.Get("Retry-After"))
		}
		waits = append(waits, h.Get("Retry-After"))
	}
	if want := []string{"2", "3", "5", "9", "17", "33"}; !slices.Equal(waits, want) {
		t.Errorf("Retry-After of the wrong tokens in a row: %v, want %v (each wrong token doubles the wait)", waits, want)
	}
	for i := range 2 {
		operator := &browser{t: t, base: f.URL()}
		code, h, _ := operator.do("POST", "/console/login", url.Values{"token": {olgaToken}}, nil)
		if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/console/s/") || operator.cookie == nil {
			t.Fatalf("the right token after %d wrong ones from the same address (try %d): %d %q, want a sign-in", 7, i+1, code, h.Get("Location"))
		}
		if code, _, page := operator.do("GET", h.Get("Location"), nil, nil); code != 200 || !strings.Contains(page, "signed in as <b>olga</b>") {
			t.Errorf("the console after signing in: %d", code)
		}
	}
	if code, _, _ := agent.do("POST", "/console/login", wrong, nil); code != http.StatusTooManyRequests {
		t.Errorf("a wrong token after the operator signed in: %d, want 429 (the back-off is not reset by another's sign-in)", code)
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

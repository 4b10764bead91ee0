package executor_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor"
)

// TestLogoutControlMakesThePageAuthenticated: is_authenticated's page rule
// (a log out / sign out / log off control), read in the isolated world, on
// the ways pages write such a control, and on a long page of links that
// only look like one. No page here sets a cookie: the control alone
// decides.
func TestLogoutControlMakesThePageAuthenticated(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for range 2000 {
		many.WriteString(`<a href="/blog">Blog</a> <a href="/catalog">Catalog output</a> <a href="/signup">Sign up</a> `)
	}
	pages := map[string]struct {
		body string
		want bool
	}{
		"link":             {`<a href="/logout">Log out</a>`, true},
		"split-in-spans":   {`<button><span>Sign</span> <span>out</span></button>`, true},
		"submit-value":     {`<form><input type="submit" value="Log off"></form>`, true},
		"aria-label":       {`<a href="/logout" aria-label="Sign out"><svg width="10" height="10"></svg></a>`, true},
		"role-button":      {`<div role="button">Sign&nbsp;out</div>`, true},
		"after-a-block":    {`<button><div>Ada Lovelace</div><div>Sign out</div></button>`, true},
		"in-a-closed-menu": {`<nav hidden><a href="/logout">Log out</a></nav>`, true},
		"capitals":         {`<a href="/logout">LOG OUT</a>`, true},
		"many-lookalikes":  {many.String(), false},
		"plain-text":       {`<p>Remember to log out when you are done.</p>`, false},
	}
	site := executor.ServeOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><title>Account</title>" + p.body))
	}))
	h := newHarness(t, 50, false)
	for name, p := range pages {
		r := h.call(t, "s", "navigate", map[string]any{"url": site + "/" + name})
		if r.IsError {
			t.Fatalf("%s: %s", name, r.Text)
		}
		// A page the gate could not read counts as authenticated (and as
		// having forms, not loaded): the read must have worked for the
		// answer to be the rule's.
		want := []string{"is_authenticated=false", "page_loaded=true", "has_forms=false"}
		if p.want {
			want[0] = "is_authenticated=true"
		}
		if name == "submit-value" {
			want[2] = "has_forms=true"
		}
		for _, w := range want {
			if !strings.Contains(r.Text, w) {
				t.Errorf("%s: the reply does not say %s:\n%.600s", name, w, r.Text)
			}
		}
	}
}

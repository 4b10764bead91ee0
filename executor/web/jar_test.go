package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/browsergate/browsergate/executor/web"
)

// TestJarBounds: a site cannot flood the session's jar: cookies are
// counted as stored (one name on many paths is many cookies), under the
// registrable domain (subdomains share it); a deletion frees its count;
// deletions alone use up nothing; another site is unaffected.
func TestJarBounds(t *testing.T) {
	t.Parallel()
	u := func(s string) *url.URL { v, _ := url.Parse(s); return v }
	j := web.NewJar()
	site := u("https://a.shop.example.com/x")
	var flood []*http.Cookie
	for i := range 5000 {
		flood = append(flood, &http.Cookie{Name: "same", Value: "v", Path: fmt.Sprintf("/p%d", i)})
	}
	j.SetCookies(site, flood)
	stored := 0
	for i := range 5000 {
		stored += len(j.Cookies(u(fmt.Sprintf("https://a.shop.example.com/p%d", i))))
	}
	if stored != 180 {
		t.Errorf("one name on 5000 paths: %d cookies stored, want 180", stored)
	}
	// A subdomain counts under the same registrable domain: full.
	j.SetCookies(u("https://b.shop.example.com/"), []*http.Cookie{{Name: "sessionid", Value: "1", Path: "/"}})
	if n := len(j.Cookies(u("https://b.shop.example.com/"))); n != 0 {
		t.Errorf("a new cookie past the domain's 180 was kept")
	}
	// Deleting frees the counts.
	var del []*http.Cookie
	for i := range 180 {
		del = append(del, &http.Cookie{Name: "same", Path: fmt.Sprintf("/p%d", i), MaxAge: -1})
	}
	j.SetCookies(site, del)
	j.SetCookies(u("https://b.shop.example.com/"), []*http.Cookie{{Name: "sessionid", Value: "1", Path: "/"}})
	if n := len(j.Cookies(u("https://b.shop.example.com/"))); n != 1 {
		t.Errorf("after deletions a new cookie was not kept (%d)", n)
	}
	// Deletions alone, from many hosts, use up nothing.
	for i := range 40 {
		var dels []*http.Cookie
		for k := range 100 {
			dels = append(dels, &http.Cookie{Name: fmt.Sprintf("c%d", k), Path: "/", MaxAge: -1})
		}
		j.SetCookies(u(fmt.Sprintf("https://h%d.example.org/", i)), dels)
	}
	j.SetCookies(u("https://bank.example.net/"), []*http.Cookie{{Name: "sid", Value: "1", Path: "/"}})
	if n := len(j.Cookies(u("https://bank.example.net/"))); n != 1 {
		t.Errorf("another site's cookie was refused after a flood of deletions")
	}
	// A cookie for a domain the host is not in, or a public suffix, is
	// refused, and counts nothing.
	j.SetCookies(u("https://evil.example.org/"), []*http.Cookie{{Name: "x", Value: "1", Domain: "bank.example.net"}, {Name: "y", Value: "1", Domain: "org"}})
	if n := len(j.Cookies(u("https://bank.example.net/"))); n != 1 {
		t.Errorf("a cross-site cookie was kept: %d", n)
	}
}

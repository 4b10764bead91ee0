package snapshot

import (
	"net/url"
	"strings"
	"testing"
)

// TestLinkURL: linkURL resolves the hrefs it takes as Chromium does (the
// same hrefs are on TestElementReadRendersAsWholeTree's controls page,
// where Chromium's own resolution is compared), and refuses the rest.
func TestLinkURL(t *testing.T) {
	t.Parallel()
	const baseText = "http://127.0.0.1:8080/dir/page?x=1" // a page's base, without its fragment
	base, err := url.Parse(baseText)
	if err != nil {
		t.Fatal(err)
	}
	// A base on a domain too: an href that names no host must not keep
	// the base's.
	const domainText = "https://www.example.com/dir/page.html?q=1"
	domain, err := url.Parse(domainText)
	if err != nil {
		t.Fatal(err)
	}
	for _, href := range []string{"///x", "//", "//?q", "//#f", "////x"} {
		if got, ok := linkURL(domainText, domain, href); ok {
			t.Errorf("linkURL(%q) on a domain = %q, want it refused", href, got)
		}
	}
	// A page whose URL has an empty query keeps it under a fragment.
	const emptyText = "http://example.com/article?"
	empty, err := url.Parse(emptyText)
	if err != nil {
		t.Fatal(err)
	}
	for href, want := range map[string]string{"#intro": "http://example.com/article?#intro", "": "http://example.com/article?", "next": "http://example.com/next"} {
		if got, ok := linkURL(emptyText, empty, href); !ok || got != want {
			t.Errorf("linkURL(%q) on %s = %q, %v; want %q", href, emptyText, got, ok, want)
		}
	}
	for _, c := range []struct{ href, want string }{
		{"/plain", "http://127.0.0.1:8080/plain"},
		{"/r?u=https://example.com/x", "http://127.0.0.1:8080/r?u=https://example.com/x"},
		{"#f//g", "http://127.0.0.1:8080/dir/page?x=1#f//g"},
		{"rel/path?q=1#frag", "http://127.0.0.1:8080/dir/rel/path?q=1#frag"},
		{"../up", "http://127.0.0.1:8080/up"},
		{"?only=query", "http://127.0.0.1:8080/dir/page?only=query"},
		{"#only-frag", "http://127.0.0.1:8080/dir/page?x=1#only-frag"},
		{"", "http://127.0.0.1:8080/dir/page?x=1"},
		{"/a/./b/../c", "http://127.0.0.1:8080/a/c"},
		{"/caf%C3%A9", "http://127.0.0.1:8080/caf%C3%A9"},
		{"//Example.COM:80/x", "http://example.com/x"},
		{"HTTP://EXAMPLE.com", "http://example.com/"},
		{"HTTPS://example.com/Path?Q=1", "https://example.com/Path?Q=1"},
		{"https://example.com:443", "https://example.com/"},
		{"http://example.com:8080/p", "http://example.com:8080/p"},
		{"http://example.com./", "http://example.com./"},
		{"ftp://example.com", "ftp://example.com/"},
		{"mailto:ada@example.com", "mailto:ada@example.com"},
		{"MAILTO:ada@example.com", "mailto:ada@example.com"},
		{"javascript:void(0)", "javascript:void(0)"},
		{"tel:+1-555-0100", "tel:+1-555-0100"},
		// Refused: the browser would write them otherwise, or Go and it
		// may disagree.
		{" /spaced ", ""}, {"/a b", ""}, {"/café", ""}, {"/back\\slash", ""}, {"/tab\tbed", ""}, {"/q?a='b'", ""},
		{"/p#a#b", ""}, {"/x/%2e%2e/y", ""}, {"/x/%2E/y", ""}, {"/bad%zz", ""},
		{"http:rel", ""}, {"http:/one-slash", ""}, {"foo://host/x", ""},
		{"http://127.1/", ""}, {"http://0x7f.1/", ""}, {"http://10.0.0.1/", ""}, {"http://[::1]/", ""},
		{"http://xn--caf-dma.com/", ""}, {"http://exa_mple.com/", ""}, {"http://a..b/", ""},
		{"http://example.com:080/p", ""}, {"http://example.com:99999/", ""},
		{"#", ""}, {"/self#", ""}, {"?#", ""}, {"http://example.com/#", ""},
		{"..//x", ""}, {"/a/..//x", ""}, {"/.//x", ""}, {"///x", ""}, {"//", ""}, {"//?q", ""}, {"//#f", ""},
		{"http://user:pw@example.com/", ""}, {"http://@example.com/", ""}, {"http://a!b@example.com/", ""},
		{"file:foo", ""}, {"file:///etc/passwd", ""}, {"blob:http://example.com/x", ""},
		{"/" + strings.Repeat("x", maxLinkURL), ""},
		{"foo:bar", ""}, {"chrome:settings", ""}, {"devtools:x", ""}, {"filesystem:x", ""}, {"sms:+1555", ""},
		{"mailto://x", ""}, {"http://0x7f/", ""}, {"http://127.0.0.0x1/", ""}, {"http://1.0x1/", ""},
		{"/a//b", ""}, {"//example.com//b", ""},
	} {
		got, ok := linkURL(baseText, base, c.href)
		if c.want == "" {
			if ok {
				t.Errorf("linkURL(%q) = %q, want it refused", c.href, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("linkURL(%q) = %q, %v; want %q", c.href, got, ok, c.want)
		}
	}
}

package toolclad

import (
	"slices"
	"strings"
)

// RedactedHeaders are the headers network_request redacts unless its
// declaration reveals them (reveal_headers): the credentials a request or
// response carries, which a page's own script cannot read either.
var RedactedHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// neverRevealed is why Proxy-Authorization is never shown: on a browser
// elsewhere (a pool host, a grid, browserless) the browser's requests carry
// in it the session's credentials for browsergate's own egress proxy.
const neverRevealed = "proxy-authorization is never shown: on a remote browser it carries the session's credentials for browsergate's own egress proxy"

// decodeRevealHeaders reads network_request's reveal_headers: names of
// RedactedHeaders but proxy-authorization, in any case. Another name is a
// load error, since every other header is shown already.
func decodeRevealHeaders(t *table, c *Command) {
	var names []string
	if !t.strings("reveal_headers", &names) {
		return
	}
	for i, n := range names {
		n = strings.ToLower(n)
		if n == "proxy-authorization" {
			t.r.errorf(t.at("reveal_headers").index(i), "%s", neverRevealed)
			continue
		}
		if !slices.Contains(RedactedHeaders, n) {
			t.r.errorf(t.at("reveal_headers").index(i), "%q is not a redacted header: only %s are redacted, every other header is shown", names[i], strings.Join(RedactedHeaders, ", "))
			continue
		}
		if !slices.Contains(c.RevealHeaders, n) {
			c.RevealHeaders = append(c.RevealHeaders, n)
		}
	}
}

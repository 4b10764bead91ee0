package egress

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
)

// Credentials are what a browser must present to a Gateway, in the Basic
// scheme of Proxy-Authorization, for its requests to be served by one
// Proxy. Chromium gives them when the daemon answers the gateway's 407 in
// Fetch.authRequired (Fetch.continueWithAuth, ProvideCredentials).
type Credentials struct {
	// Username picks the proxy: random, and never one the gateway
	// already routes.
	Username string
	// Password proves the request is that proxy's session's: random,
	// compared in constant time.
	Password string
}

// newCredentials returns fresh random credentials: each field is
// crypto/rand.Text, 26 base32 characters holding 130 random bits. Neither
// half can be guessed online, and the two together cannot be derived from
// another session's pair. Base32 has no ':' (which RFC 7617 forbids in a
// user-id) and nothing a header or a CDP message would have to escape.
func newCredentials() Credentials {
	return Credentials{Username: rand.Text(), Password: rand.Text()}
}

// Why the gateway refused a request's credentials: what OnRefused receives
// and the refusal's log record says. The client sees the same 407 for
// every one of them, so a guesser learns nothing about which part was
// wrong.
const (
	// AuthMissing: the request has no Proxy-Authorization field.
	AuthMissing = "no Proxy-Authorization"
	// AuthRepeated: the request has more than one Proxy-Authorization
	// field; which one counts would be a guess, so none does.
	AuthRepeated = "more than one Proxy-Authorization"
	// AuthScheme: the credentials are in a scheme other than Basic.
	AuthScheme = "not the Basic scheme"
	// AuthMalformed: Basic credentials that are not canonical base64 of
	// "user-id:password" (RFC 7617 section 2).
	AuthMalformed = "malformed Basic credentials"
	// AuthUnknownUser: no proxy is routed under that user name (never
	// issued, or removed and dropped).
	AuthUnknownUser = "unknown user name"
	// AuthWrongPassword: the user name is routed, the password is not its
	// own.
	AuthWrongPassword = "wrong password"
	// AuthRemoved: the credentials were removed, or their proxy closed,
	// and the route is being dropped.
	AuthRemoved = "credentials removed or proxy closed"
)

// proxyBasic reads the one Proxy-Authorization field of h (RFC 9110
// section 11.7.2) in the Basic scheme. It returns the user-id and the
// password, or why none can be taken.
func proxyBasic(h http.Header) (user, password, refused string) {
	values := h.Values("Proxy-Authorization")
	switch len(values) {
	case 0:
		return "", "", AuthMissing
	case 1:
		return parseBasic(values[0])
	default:
		return "", "", AuthRepeated
	}
}

// parseBasic reads credentials = auth-scheme 1*SP token68 (RFC 9110
// section 11.4) where the scheme is Basic (case-insensitive) and token68 is
// the canonical padded base64 of user-id ":" password (RFC 7617 section 2).
// It returns the user-id and the password, or why they cannot be read.
// Non-canonical base64 (stray bits, missing padding, line breaks, which
// encoding/base64 would skip) is refused: a credential has one spelling.
func parseBasic(v string) (user, password, refused string) {
	v = strings.Trim(v, " \t")
	scheme, token, ok := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", AuthScheme
	}
	token = strings.TrimLeft(token, " ")
	if !ok || token == "" || strings.ContainsAny(token, "\r\n") {
		return "", "", AuthMalformed
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(token)
	if err != nil {
		return "", "", AuthMalformed
	}
	user, password, ok = strings.Cut(string(raw), ":")
	if !ok {
		return "", "", AuthMalformed
	}
	return user, password, ""
}

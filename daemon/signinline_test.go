package daemon

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestSignInTokenReadsATokenOrItsLine: the token alone, and the operator's
// whole line of the file, give the operator and the token; a line that
// names another operator, a line with a wrong token, and a token that
// contains a colon are each read as they should be.
func TestSignInTokenReadsATokenOrItsLine(t *testing.T) {
	const adaToken = "5f0c9e2a7d4b81c3e6a09f4d2b7c8e15" // random, as the docs advise
	const colonToken = "bob:9d3e71a04c6b25f8e0a7d19c4b63f2e8"
	ops, err := toolclad.ParseOperators("ops", []byte("ada:"+adaToken+"\nolga:"+olgaToken+"\ncarl:"+colonToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pasted, operator, token string
	}{
		{adaToken, "ada", adaToken},
		{"  " + adaToken + "\n", "ada", adaToken},
		{"ada:" + adaToken, "ada", adaToken},
		{"ada: " + adaToken + " ", "ada", adaToken},
		{"olga:" + adaToken, "", ""},   // the name is not the token's operator's
		{"nobody:" + adaToken, "", ""}, // nor an operator at all
		{"ada:wrong-token-0123456789abc", "", ""},
		{":" + adaToken, "", ""},
		{colonToken, "carl", colonToken}, // a token with a colon is a token first
		{"carl:" + colonToken, "carl", colonToken},
		{"", "", ""},
	} {
		op, tok := signInToken(ops, c.pasted)
		if op != c.operator || tok != c.token {
			t.Errorf("signInToken(%q) = %q, %q; want %q, %q", c.pasted, op, tok, c.operator, c.token)
		}
	}
}

// TestConsoleSignInTakesTheOperatorsLine: the console's sign-in takes the
// line "olga:TOKEN" as pasted from the operator token file, and the
// sign-in it gives opens the console; a line naming someone else with
// olga's token is refused; the sign-in page says which part is the token.
func TestConsoleSignInTakesTheOperatorsLine(t *testing.T) {
	f, _, _ := consoleFront(t)
	page := &browser{t: t, base: f.URL()}
	if code, _, body := page.do("GET", "/console/login", nil, nil); code != http.StatusOK || !strings.Contains(body, "the part after <code>NAME:</code>") {
		t.Errorf("the sign-in page does not say which part to give: %d\n%s", code, body)
	}
	other := &browser{t: t, base: f.URL()}
	if code, _, _ := other.do("POST", "/console/login", url.Values{"token": {"ada:" + olgaToken}}, nil); code != http.StatusUnauthorized || other.cookie != nil {
		t.Errorf("olga's token under ada's name: %d, cookie %v", code, other.cookie)
	}
	b := &browser{t: t, base: f.URL()}
	code, h, _ := b.do("POST", "/console/login", url.Values{"token": {"olga:" + olgaToken}}, nil)
	home := h.Get("Location")
	if code != http.StatusSeeOther || !strings.HasPrefix(home, "/console/s/") || b.cookie == nil {
		t.Fatalf("sign-in with olga's line: %d %q %v", code, home, b.cookie)
	}
	if code, _, _ := b.do("GET", home, nil, nil); code != http.StatusOK {
		t.Errorf("the console after signing in with the line: %d", code)
	}
}

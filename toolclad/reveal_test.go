package toolclad_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// revealManifest declares network_request with the given keys.
func revealManifest(keys string) string {
	return "[tool]\nname = \"n\"\n\n[browser.commands.network_request]\n" + keys
}

// TestRevealHeadersLoad: network_request's reveal_headers loads lowercase,
// once each; without it the command reveals nothing. A header that is not
// redacted, Proxy-Authorization (the egress proxy's credentials on a
// remote browser), a value that is not a list of strings, and the key on
// another command are load errors that say what is wrong.
func TestRevealHeadersLoad(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("n.toml", []byte(revealManifest(`reveal_headers = ["Set-Cookie", "authorization", "set-cookie"]`+"\n")))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := m.Command("network_request").RevealHeaders; !slices.Equal(got, []string{"set-cookie", "authorization"}) {
		t.Errorf("RevealHeaders = %q", got)
	}
	m, err = toolclad.Parse("n.toml", []byte(revealManifest("")))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := m.Command("network_request").RevealHeaders; got != nil {
		t.Errorf("without the key, RevealHeaders = %q", got)
	}
	for _, tc := range []struct{ name, manifest, want string }{
		{"not redacted", revealManifest(`reveal_headers = ["x-trace"]` + "\n"),
			`browser.commands.network_request.reveal_headers[0]: "x-trace" is not a redacted header: only authorization, proxy-authorization, cookie, set-cookie are redacted`},
		{"the egress proxy's credentials", revealManifest(`reveal_headers = ["Proxy-Authorization"]` + "\n"),
			"reveal_headers[0]: proxy-authorization is never shown: on a remote browser it carries the session's credentials for browsergate's own egress proxy"},
		{"not a list", revealManifest(`reveal_headers = "cookie"` + "\n"), "browser.commands.network_request.reveal_headers: wrong type"},
		{"another command", "[tool]\nname = \"n\"\n\n[browser.commands.network_requests]\nreveal_headers = [\"cookie\"]\n", "network_requests.reveal_headers"},
	} {
		_, err := toolclad.Parse("n.toml", []byte(tc.manifest))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error holding %q", tc.name, err, tc.want)
		}
	}
}

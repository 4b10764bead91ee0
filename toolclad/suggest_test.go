package toolclad_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestUnknownNamesSuggestTheNearest: a misspelt key, table, command or
// argument is reported with the valid name nearest to it at that place;
// a name near none gets no guess.
func TestUnknownNamesSuggestTheNearest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"key in a table", "[browser.scope]\nalowed_domains = [\"example.com\"]\n", "browser.scope.alowed_domains: unknown key; did you mean `allowed_domains`?"},
		{"swapped letters", "[browser]\nheadelss = true\n", "browser.headelss: unknown key; did you mean `headless`?"},
		{"table", "[browser.scop]\nallowed_domains = [\"example.com\"]\n", "browser.scop: unknown key; did you mean `scope`?"},
		{"top-level table", "[secret.PW]\nenv = \"PW\"\n", "secret: unknown key; did you mean `secrets`?"},
		{"command", "[browser.commands.clik]\n", "browser.commands.clik: unknown command; did you mean `click`? (known: navigate,"},
		{"argument", "[browser.commands.click]\nargs.selecter = { type = \"selector\" }\n", "browser.commands.click.args.selecter: unknown argument for click; did you mean `selector`? (known: ref, selector, button, click_count, modifiers)"},
		{"key of an argument", "[browser.commands.navigate]\nargs.url = { type = \"url\", shemes = [\"https\"] }\n", "browser.commands.navigate.args.url.shemes: unknown key; did you mean `schemes`?"},
		{"no near name", "[browser]\nfrobnicate = true\n", "browser.frobnicate: unknown key\n"},
		{"no near command", "[browser.commands.teleport]\n", "browser.commands.teleport: unknown command (known: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := toolclad.Parse("m.toml", []byte("[tool]\nname = \"t\"\nmode = \"browser\"\n"+tc.body))
			if !errors.Is(err, toolclad.ErrInvalidManifest) || !strings.Contains(err.Error()+"\n", tc.want) {
				t.Errorf("Parse error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

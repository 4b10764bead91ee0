package toolclad_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// deadEndHead is the start of every manifest TestWarnings loads.
const deadEndHead = `[tool]
name = "t"
mode = "browser"

[browser]
`

// TestWarnings: each manifest that loads but has a dead end gets exactly
// the warnings that name it, at the line that declares it; a manifest
// without one gets none.
func TestWarnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body string
		want []string // each "line:col: key: part of the message", in order
	}{
		{
			name: "ref-only click under text snapshots",
			body: `extract_mode = "text"
[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.commands.snapshot]
[browser.commands.click]
args.ref = { type = "ref" }
`,
			want: []string{`11:6: browser.commands.click.args.ref: click can never run: its required argument ref can never be given: this manifest's snapshots carry no refs: extract_mode = "text"`},
		},
		{
			name: "ref-only click without a snapshot",
			body: `[browser.commands.click]
args.ref = { type = "ref" }
`,
			want: []string{`7:6: browser.commands.click.args.ref: click can never run: its required argument ref can never be given: no snapshot is declared`},
		},
		{
			name: "type_text's ref under html snapshots",
			body: `extract_mode = "html"
[browser.commands.snapshot]
[browser.commands.type_text]
args.ref = { type = "ref" }
args.text = { type = "string" }
`,
			want: []string{`9:6: browser.commands.type_text.args.ref: type_text's argument ref can never be given: this manifest's snapshots carry no refs: extract_mode = "html"`},
		},
		{
			name: "click by ref or selector under text snapshots still clicks by selector",
			body: `extract_mode = "text"
[browser.commands.snapshot]
[browser.commands.click]
args.ref = { type = "ref" }
args.selector = { type = "selector" }
`,
			want: []string{`9:6: browser.commands.click.args.ref: click's argument ref can never be given`},
		},
		{
			name: "both of an exactly-one pair required",
			body: `[browser.commands.snapshot]
[browser.commands.select_option]
args.ref = { type = "ref" }
args.value = { type = "string", required = true }
args.label = { type = "string", required = true }
`,
			want: []string{`8:1: browser.commands.select_option.args: select_option can never run: value and label are all required, but exactly one of value, label may be given`},
		},
		{
			name: "enum none of whose values passes the pattern",
			body: `[browser.commands.wait_for]
args.role = { type = "enum", allowed = ["Button", "Link"] }
`,
			want: []string{`7:6: browser.commands.wait_for.args.role: wait_for can never run: its required argument role can never be given: none of its allowed values passes its own checks ("Button" does not match the pattern ^[a-z]+$; "Link"`},
		},
		{
			name: "ref pattern no ref matches",
			body: `[browser.commands.snapshot]
[browser.commands.hover]
args.ref = { type = "ref", pattern = "^ref-[0-9]+$" }
`,
			want: []string{`8:6: browser.commands.hover.args.ref: hover can never run: its required argument ref can never be given: its pattern ^ref-[0-9]+$ matches none of the refs`},
		},
		{
			name: "tab pattern no tab id matches",
			body: `[browser.commands.switch_tab]
args.tab = { type = "string", pattern = "^tab[0-9]$" }
`,
			want: []string{`7:6: browser.commands.switch_tab.args.tab: switch_tab can never run: its required argument tab can never be given: its pattern ^tab[0-9]$ matches none of the tab ids`},
		},
		{
			name: "url pattern on a host outside the scope",
			body: `[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.commands.navigate]
args.url = { type = "url", pattern = "^https://www\\.example\\.com/" }
`,
			want: []string{`9:6: browser.commands.navigate.args.url: navigate can never run: its required argument url can never be given: its pattern ^https://www\.example\.com/ matches only URLs on www.example.com, which the scope refuses`},
		},
		{
			name: "url pattern of a scheme the argument refuses",
			body: `[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], pattern = "^http://docs\\.example\\.com/" }
`,
			want: []string{`9:6: browser.commands.navigate.args.url: navigate can never run: its required argument url can never be given: its pattern ^http://docs\.example\.com/ matches only http URLs, and its schemes are https`},
		},
		{
			name: "usable patterns and refs",
			body: `[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], pattern = "^https://docs\\.example\\.com/api/" }
[browser.commands.snapshot]
[browser.commands.click]
args.ref = { type = "ref", pattern = "^e[0-9]+$" }
[browser.commands.switch_tab]
args.tab = { type = "string", pattern = "^t[1-3]$" }
[browser.commands.wait_for]
args.role = { type = "enum", allowed = ["button"] }
`,
		},
		{
			name: "search backend outside the scope",
			body: `engine = "http"
[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.search]
backend = "searxng"
url = "https://search.example.net/search"
[browser.commands.search_web]
`,
			want: []string{`11:1: browser.search.url: search_web's backend https://search.example.net/search is outside the scope`},
		},
		{
			name: "default search backend outside the scope",
			body: `engine = "http"
[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.search]
backend = "duckduckgo"
[browser.commands.search_web]
`,
			want: []string{`10:1: browser.search.backend: search_web's backend https://html.duckduckgo.com/html/ is outside the scope`},
		},
		{
			name: "search backend inside the scope",
			body: `engine = "http"
[browser.scope]
allowed_domains = ["docs.example.com", "html.duckduckgo.com"]
[browser.search]
backend = "duckduckgo"
[browser.commands.search_web]
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := toolclad.Parse("m.toml", []byte(deadEndHead+tc.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := m.Warnings()
			if len(got) != len(tc.want) {
				t.Fatalf("%d warning(s), want %d:\n%s", len(got), len(tc.want), warningLines(got))
			}
			for i, w := range got {
				if !w.Warning || !strings.HasPrefix(w.String(), "m.toml:"+strings.Replace(tc.want[i], ": ", ": warning: ", 1)) {
					t.Errorf("warning %d:\n%s\nwant it to start with m.toml:%s (as a warning)", i, w.String(), tc.want[i])
				}
			}
		})
	}
}

func warningLines(ps []toolclad.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

// TestExamplesHaveNoDeadEnds: every shipped example manifest loads with
// no warning (web-scraping.toml once declared a ref-only click under
// extract_mode = "text", whose snapshots hand out no refs).
func TestExamplesHaveNoDeadEnds(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests: %v", err)
	}
	for _, f := range files {
		m, err := toolclad.Load(f)
		if err != nil {
			t.Errorf("Load(%s): %v", f, err)
			continue
		}
		if ws := m.Warnings(); len(ws) > 0 {
			t.Errorf("%s has dead ends:\n%s", f, warningLines(ws))
		}
	}
}

// TestMoreWarnings: the dead ends of handle_dialog, of a URL argument under
// a scope that allows no host, and of patterns that match nothing or
// nothing short enough; an optional argument the manifest leaves to the
// built-in signature is not one.
func TestMoreWarnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body string
		want []string
	}{
		{
			name: "handle_dialog under dialogs dismiss",
			body: "dialogs = \"dismiss\"\n[browser.commands.handle_dialog]\n",
			want: []string{`6:1: browser.dialogs: handle_dialog can never run: dialogs = "dismiss" answers every dialog at once`},
		},
		{
			name: "navigate under an empty scope",
			body: "[browser.commands.navigate]\n",
			want: []string{`6:19: browser.commands.navigate: navigate can never run: its required argument url can never be given: the scope allows no host`},
		},
		{
			name: "pattern longer than max_len",
			body: "[browser.commands.type_text]\nargs.text = { type = \"string\", max_len = 5, pattern = \"^[0-9]{6,}$\" }\n",
			want: []string{`7:6: browser.commands.type_text.args.text: type_text can never run: its required argument text can never be given: its pattern ^[0-9]{6,}$ matches only values of at least 6 characters, and max_len is 5`},
		},
		{
			name: "pattern that matches nothing",
			body: "[browser.commands.press_key]\nargs.key = { type = \"string\", pattern = \"[^\\\\x00-\\\\x{10FFFF}]\" }\n",
			want: []string{`7:6: browser.commands.press_key.args.key: press_key can never run: its required argument key can never be given: its pattern [^\x00-\x{10FFFF}] matches nothing at all`},
		},
		{
			name: "submit_form's undeclared ref without a snapshot",
			body: "[browser.commands.submit_form]\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := toolclad.Parse("m.toml", []byte(deadEndHead+tc.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := m.Warnings()
			if len(got) != len(tc.want) {
				t.Fatalf("%d warning(s), want %d:\n%s", len(got), len(tc.want), warningLines(got))
			}
			for i, w := range got {
				if !w.Warning || !strings.HasPrefix(w.String(), "m.toml:"+strings.Replace(tc.want[i], ": ", ": warning: ", 1)) {
					t.Errorf("warning %d:\n%s\nwant it to start with m.toml:%s (as a warning)", i, w.String(), tc.want[i])
				}
			}
		})
	}
}

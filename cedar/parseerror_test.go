package cedar

import (
	"os"
	"path/filepath"
	"testing"

	cedargo "github.com/cedar-policy/cedar-go"
)

// TestSyntaxErrorsSayWhatWasExpected: a policy file that does not parse
// is reported at the token that was wrong (not the one after it, where
// cedar-go's parser stops), as "expected …, found …".
func TestSyntaxErrorsSayWhatWasExpected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{`permit (principal action, resource);`, `p.cedar:1:19: expected ",", found "action"`},
		{`permitt (principal, action, resource);`, `p.cedar:1:1: expected "permit" or "forbid" (after any @annotations), found "permitt"`},
		{"permit (principal, action, resource)\n", `p.cedar:2:1: expected ";", found the end of the file`},
		{`@id("x" permit (principal, action, resource);`, `p.cedar:1:9: expected ")", found "permit"`},
		{`permit (principal, action, resource) when { 1 + };`, `p.cedar:1:49: expected an expression (a literal, principal, action, resource, context, an entity, [a set], {a record} or (…)), found "}"`},
		{"// a comment with \"quotes\"\npermit (principal, action, resource)\nwhen { resource.command == \"navigate\" &&  };", `p.cedar:3:43: expected an expression`},
		{`permit (principal, action, resource) when { resource.x like 5 };`, `p.cedar:1:61: expected a string pattern after "like", found "5"`},
		{`permit (principal, action, resource) when { resource.x like`, `p.cedar:1:60: expected a string pattern after "like", found the end of the file`},
		{`permit (principal, action, resource) when { [1, 2 3] };`, `p.cedar:1:51: expected "," or the end of the list, found "3"`},
		{`permit (principal, action, resource) when { resource.x == "a };`, `p.cedar:1:`},
		{"permit (principal, action, resource) when { \"é\" == 1 2 };", `p.cedar:1:54: expected "}", found "2"`},
	} {
		_, err := cedargo.NewPolicyListFromBytes("p.cedar", []byte(tc.src))
		if err == nil {
			t.Errorf("%q parses", tc.src)
			continue
		}
		got := newParseError("p.cedar", []byte(tc.src), err).Error()
		if len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
			t.Errorf("%q:\n got %s\nwant %s…\n(cedar-go: %v)", tc.src, got, tc.want, err)
		}
	}
}

// FuzzParseError: whatever a policy file holds, its syntax error is read
// without a panic, at a place inside the file, and the tokens come in
// order.
func FuzzParseError(f *testing.F) {
	seeds, _ := filepath.Glob("../policies/*.cedar")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Add([]byte(`permit (principal action, resource);`))
	f.Add([]byte("/* open"))
	f.Fuzz(func(t *testing.T, src []byte) {
		toks := cedarTokens(src)
		for i := 1; i < len(toks); i++ {
			a, b := toks[i-1], toks[i]
			if b.line < a.line || b.line == a.line && b.col <= a.col && !b.eof {
				t.Fatalf("token %d (%q at %d:%d) does not come after %q at %d:%d", i, b.text, b.line, b.col, a.text, a.line, a.col)
			}
		}
		if _, err := cedargo.NewPolicyListFromBytes("p.cedar", src); err != nil {
			pe := newParseError("p.cedar", src, err)
			if pe.Line < 0 || pe.Column < 0 || pe.Msg == "" {
				t.Fatalf("ParseError %+v", pe)
			}
		}
	})
}

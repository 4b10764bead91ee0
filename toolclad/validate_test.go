package toolclad_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// validateManifest declares every built-in command, some narrowed, so the
// table below can exercise every type and rule.
const validateManifest = `
[tool]
name = "v"
mode = "browser"

[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], sanitize = ["injection"] }
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
args.ref = { type = "ref" }
args.selector = { type = "string" }
args.text = { type = "string", sanitize = ["injection"], max_len = 40 }
[browser.commands.submit_form]
[browser.commands.screenshot]
[browser.commands.go_back]
[browser.commands.wait_for]
[browser.commands.extract_html]
args.selector = { type = "string", sanitize = ["injection"] }
[browser.commands.list_tabs]
[browser.commands.execute_js]
args.expression = { type = "string", pattern = "^document\\." }
[browser.commands.scroll]
[browser.commands.network_timing]
`

func loadValidateManifest(t testing.TB) *toolclad.Manifest {
	t.Helper()
	m, err := toolclad.Parse("validate.toml", []byte(validateManifest))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

// TestValidate proves each type and rule: accepted values come back
// canonical with defaults applied, refused ones name the argument and rule.
func TestValidate(t *testing.T) {
	t.Parallel()
	m := loadValidateManifest(t)
	type rule struct{ arg, rule string }
	tests := []struct {
		name    string
		command string
		args    map[string]any
		want    map[string]any // nil when refused
		rules   []rule         // the refusals, in order
	}{
		// url
		{name: "url https", command: "navigate", args: map[string]any{"url": "https://example.com/a?b=1&c=%20d#x"},
			want: map[string]any{"url": "https://example.com/a?b=1&c=%20d#x"}},
		{name: "url scheme not allowed", command: "navigate", args: map[string]any{"url": "http://example.com/"}, rules: []rule{{"url", "schemes"}}},
		{name: "url ftp", command: "navigate", args: map[string]any{"url": "ftp://example.com/"}, rules: []rule{{"url", "schemes"}}},
		{name: "url javascript", command: "navigate", args: map[string]any{"url": " Java\tScript:alert(1)"}, rules: []rule{{"url", "sanitize"}}},
		{name: "url data", command: "navigate", args: map[string]any{"url": "data:text/html,<b>x</b>"}, rules: []rule{{"url", "sanitize"}}},
		{name: "url relative", command: "navigate", args: map[string]any{"url": "/login"}, rules: []rule{{"url", "url"}}},
		{name: "url no host", command: "navigate", args: map[string]any{"url": "https:foo"}, rules: []rule{{"url", "url"}}},
		{name: "url not a string", command: "navigate", args: map[string]any{"url": 12.0}, rules: []rule{{"url", "type"}}},
		{name: "url missing", command: "navigate", args: map[string]any{}, rules: []rule{{"url", "required"}}},
		{name: "url null is missing", command: "navigate", args: map[string]any{"url": nil}, rules: []rule{{"url", "required"}}},
		{name: "url NUL", command: "navigate", args: map[string]any{"url": "https://example.com/\x00"}, rules: []rule{{"url", "sanitize"}}},
		{name: "url too long", command: "navigate", args: map[string]any{"url": "https://example.com/" + strings.Repeat("a", 9000)}, rules: []rule{{"url", "max_len"}}},
		{name: "unknown arg", command: "navigate", args: map[string]any{"url": "https://example.com/", "tab": "1"}, rules: []rule{{"tab", "unknown"}}},
		{name: "unknown arg on go_back", command: "go_back", args: map[string]any{"steps": 2.0}, rules: []rule{{"steps", "unknown"}}},
		{name: "nil args", command: "go_back", args: nil, want: map[string]any{}},

		// ref and selector, one_of
		{name: "click ref", command: "click", args: map[string]any{"ref": "e12"}, want: map[string]any{"ref": "e12"}},
		{name: "click bad ref", command: "click", args: map[string]any{"ref": "12"}, rules: []rule{{"ref", "pattern"}}},
		{name: "click long ref", command: "click", args: map[string]any{"ref": "e1234567"}, rules: []rule{{"ref", "pattern"}}},
		{name: "click selector", command: "click", args: map[string]any{"selector": `a[href*="x"] > .y:nth-child(2)`},
			want: map[string]any{"selector": `a[href*="x"] > .y:nth-child(2)`}},
		{name: "click neither", command: "click", args: map[string]any{}, rules: []rule{{"ref|selector", "one_of"}}},
		{name: "click both", command: "click", args: map[string]any{"ref": "e1", "selector": "#a"}, rules: []rule{{"ref|selector", "one_of"}}},
		{name: "empty selector", command: "click", args: map[string]any{"selector": ""}, rules: []rule{{"selector", "required"}}},
		{name: "selector control char", command: "click", args: map[string]any{"selector": "a\nb"}, rules: []rule{{"selector", "pattern"}}},
		{name: "selector too long", command: "snapshot", args: map[string]any{"selector": strings.Repeat("a", 1025)}, rules: []rule{{"selector", "max_len"}}},
		{name: "snapshot whole page", command: "snapshot", args: map[string]any{}, want: map[string]any{}},

		// string, sanitize must not break legitimate input
		{name: "type focused", command: "type_text", args: map[string]any{"text": `He said "hi" <b>; a&b`},
			want: map[string]any{"text": `He said "hi" <b>; a&b`}},
		{name: "type tab newline", command: "type_text", args: map[string]any{"text": "a\tb\r\nc"}, want: map[string]any{"text": "a\tb\r\nc"}},
		{name: "type NUL", command: "type_text", args: map[string]any{"text": "a\x00b"}, rules: []rule{{"text", "sanitize"}}},
		{name: "type ESC", command: "type_text", args: map[string]any{"text": "\x1b[2J"}, rules: []rule{{"text", "sanitize"}}},
		{name: "type too long", command: "type_text", args: map[string]any{"text": strings.Repeat("é", 41)}, rules: []rule{{"text", "max_len"}}},
		{name: "type unicode length", command: "type_text", args: map[string]any{"text": strings.Repeat("é", 40)}, want: map[string]any{"text": strings.Repeat("é", 40)}},
		{name: "type empty required", command: "type_text", args: map[string]any{"text": ""}, rules: []rule{{"text", "required"}}},
		{name: "type ref and selector", command: "type_text", args: map[string]any{"text": "x", "ref": "e1", "selector": "#a"}, rules: []rule{{"ref|selector", "one_of"}}},
		{name: "extract sanitized selector", command: "extract_html", args: map[string]any{"selector": `form#login input[name='q'], a[href^="https://x?a=1&b=%2F"]`},
			want: map[string]any{"selector": `form#login input[name='q'], a[href^="https://x?a=1&b=%2F"]`}},
		{name: "pattern", command: "execute_js", args: map[string]any{"expression": "document.title"}, want: map[string]any{"expression": "document.title"}},
		{name: "pattern mismatch", command: "execute_js", args: map[string]any{"expression": "fetch('/x')"}, rules: []rule{{"expression", "pattern"}}},

		// integer
		{name: "wait default", command: "wait_for", args: map[string]any{"text": "Done"}, want: map[string]any{"text": "Done", "timeout_ms": int64(5000)}},
		{name: "wait float64 integer", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": 250.0}, want: map[string]any{"text": "x", "timeout_ms": int64(250)}},
		{name: "wait json.Number", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": json.Number("250")}, want: map[string]any{"text": "x", "timeout_ms": int64(250)}},
		{name: "wait clamp high", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": 99999.0}, want: map[string]any{"text": "x", "timeout_ms": int64(30000)}},
		{name: "wait clamp low", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": json.Number("-5")}, want: map[string]any{"text": "x", "timeout_ms": int64(100)}},
		{name: "wait fraction", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": 1.5}, rules: []rule{{"timeout_ms", "type"}}},
		{name: "wait huge", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": json.Number("1e300")}, rules: []rule{{"timeout_ms", "type"}}},
		{name: "wait string", command: "wait_for", args: map[string]any{"text": "x", "timeout_ms": "100"}, rules: []rule{{"timeout_ms", "type"}}},
		{name: "scroll defaults", command: "scroll", args: map[string]any{}, want: map[string]any{"direction": "down", "amount": int64(3)}},
		{name: "scroll max", command: "scroll", args: map[string]any{"amount": 11.0}, rules: []rule{{"amount", "max"}}},
		{name: "scroll min", command: "scroll", args: map[string]any{"amount": json.Number("0")}, rules: []rule{{"amount", "min"}}},

		// enum and boolean
		{name: "scroll up", command: "scroll", args: map[string]any{"direction": "up"}, want: map[string]any{"direction": "up", "amount": int64(3)}},
		{name: "scroll sideways", command: "scroll", args: map[string]any{"direction": "left"}, rules: []rule{{"direction", "enum"}}},
		{name: "enum case", command: "scroll", args: map[string]any{"direction": "Up"}, rules: []rule{{"direction", "enum"}}},
		{name: "screenshot default", command: "screenshot", args: map[string]any{}, want: map[string]any{"full_page": false}},
		{name: "screenshot true", command: "screenshot", args: map[string]any{"full_page": true}, want: map[string]any{"full_page": true}},
		{name: "screenshot string", command: "screenshot", args: map[string]any{"full_page": "true"}, rules: []rule{{"full_page", "type"}}},

		// several problems at once
		{name: "all reported", command: "scroll", args: map[string]any{"direction": 1.0, "amount": "x", "speed": 2.0},
			rules: []rule{{"speed", "unknown"}, {"direction", "type"}, {"amount", "type"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := m.Command(tt.command)
			got, err := c.Validate(tt.args)
			if tt.rules == nil {
				if err != nil {
					t.Fatalf("Validate(%v) error: %v", tt.args, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Validate(%v) = %#v, want %#v", tt.args, got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%v) = %v, want refusal %v", tt.args, got, tt.rules)
			}
			if got != nil {
				t.Errorf("refused Validate returned values %v", got)
			}
			var gotRules []rule
			for _, ae := range toolclad.ArgErrors(err) {
				gotRules = append(gotRules, rule{ae.Arg, ae.Rule})
				if ae.Command != tt.command {
					t.Errorf("ArgError.Command = %q", ae.Command)
				}
				if !strings.Contains(ae.Error(), `"`+ae.Arg+`"`) {
					t.Errorf("message %q does not name the argument", ae.Error())
				}
			}
			if !reflect.DeepEqual(gotRules, tt.rules) {
				t.Errorf("rules = %v, want %v (error: %v)", gotRules, tt.rules, err)
			}
		})
	}
}

// TestArgErrorText pins the wording an agent reads.
func TestArgErrorText(t *testing.T) {
	t.Parallel()
	m := loadValidateManifest(t)
	_, err := m.Command("navigate").Validate(map[string]any{"url": "ftp://example.com/"})
	want := `argument "url": scheme "ftp" is not allowed (allowed: https)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	var ae *toolclad.ArgError
	if !errors.As(err, &ae) || ae.Rule != "schemes" {
		t.Errorf("errors.As: %v", ae)
	}
	if got := toolclad.RefusalText(err); got != "invalid arguments for navigate:\n"+want {
		t.Errorf("RefusalText = %q", got)
	}
}

// FuzzValidate proves that no argument map makes Validate panic, and that
// it either refuses with ArgErrors or returns only declared arguments.
func FuzzValidate(f *testing.F) {
	m := loadValidateManifest(f)
	f.Add("navigate", `{"url":"https://example.com/"}`)
	f.Add("click", `{"ref":"e1","selector":"#a"}`)
	f.Add("wait_for", `{"text":"x","timeout_ms":1e400}`)
	f.Add("scroll", `{"direction":null,"amount":[1]}`)
	f.Add("type_text", `{"text":"\u0000","ref":{}}`)
	f.Fuzz(func(t *testing.T, command, args string) {
		c := m.Command(command)
		if c == nil {
			c = m.Commands[len(command)%len(m.Commands)]
		}
		dec := json.NewDecoder(strings.NewReader(args))
		if len(args)%2 == 0 {
			dec.UseNumber()
		}
		var raw map[string]any
		if dec.Decode(&raw) != nil {
			return
		}
		got, err := c.Validate(raw)
		if err != nil {
			if len(toolclad.ArgErrors(err)) == 0 {
				t.Fatalf("error without ArgErrors: %v", err)
			}
			return
		}
		for k := range got {
			if c.Arg(k) == nil {
				t.Fatalf("Validate returned undeclared argument %q", k)
			}
		}
	})
}

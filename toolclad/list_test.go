package toolclad

import (
	"strings"
	"testing"
)

// TestListArguments: a list argument (upload_file's files) is offered
// only where declared, with a JSON Schema array of its items bounded in
// length; Validate takes 1 to max_items elements, each checked as the
// item argument and named by its place when refused; a manifest may
// narrow max_items, never widen it.
func TestListArguments(t *testing.T) {
	load := func(args string) (*Command, error) {
		m, err := Parse("list.toml", []byte("[tool]\nname = \"t\"\nmode = \"browser\"\n[browser]\n[browser.files]\nupload_dir = \".\"\n[browser.commands.upload_file]\n"+args))
		if err != nil {
			return nil, err
		}
		return m.Command("upload_file"), nil
	}
	bare, err := load("")
	if err != nil {
		t.Fatal(err)
	}
	if bare.Arg("files") != nil || !bare.Arg("file").Required {
		t.Fatalf("declared without args, upload_file offers files or makes file optional: %+v", bare.Args)
	}
	c, err := load("args.selector = {}\nargs.file = {}\nargs.files = { max_items = 3 }\n")
	if err != nil {
		t.Fatal(err)
	}
	files := c.InputSchema()["properties"].(map[string]any)["files"].(map[string]any)
	items, _ := files["items"].(map[string]any)
	if files["type"] != "array" || files["maxItems"] != 3 || files["minItems"] != 1 || items["type"] != "string" || items["maxLength"] != 255 {
		t.Errorf("files' schema = %v", files)
	}
	if c.Arg("file").Required {
		t.Error("with files declared, file is still required")
	}
	got, err := c.Validate(map[string]any{"selector": "#f", "files": []any{"a.txt", "b/c.pdf"}})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := got["files"].([]any); !ok || len(l) != 2 || l[1] != "b/c.pdf" {
		t.Errorf("files validated as %#v", got["files"])
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"not a list", map[string]any{"selector": "#f", "files": "a.txt"}, "must be a list (a JSON array), got string"},
		{"empty", map[string]any{"selector": "#f", "files": []any{}}, "must hold at least one element"},
		{"too long", map[string]any{"selector": "#f", "files": []any{"a", "b", "c", "d"}}, "holds 4 elements (max 3)"},
		{"bad element", map[string]any{"selector": "#f", "files": []any{"a.txt", "/etc/passwd"}}, `argument "files[1]"`},
		{"null element", map[string]any{"selector": "#f", "files": []any{nil}}, "files[0]"},
		{"element of the wrong type", map[string]any{"selector": "#f", "files": []any{7.0}}, "files[0]"},
		{"file and files", map[string]any{"selector": "#f", "file": "a", "files": []any{"b"}}, "exactly one of file, files"},
		{"neither", map[string]any{"selector": "#f"}, "exactly one of file, files"},
	} {
		if _, err := c.Validate(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := load("args.selector = {}\nargs.files = { max_items = 11 }\n"); err == nil || !strings.Contains(err.Error(), "exceeds the built-in limit 10") {
		t.Errorf("widening max_items: %v", err)
	}
	if _, err := load("args.selector = {}\nargs.files = { max_len = 3 }\n"); err == nil || !strings.Contains(err.Error(), "does not apply to a list argument") {
		t.Errorf("max_len on a list: %v", err)
	}
}

// TestFillFormFieldTakesExactlyOneOfTextValueChecked: a field of fill_form
// carries text, value (an option) or checked (a checkbox or radio), and
// exactly one of them; a field with none or two is refused, the error
// naming the field by its index.
func TestFillFormFieldTakesExactlyOneOfTextValueChecked(t *testing.T) {
	m, err := Parse("fill.toml", []byte("[tool]\nname = \"t\"\nmode = \"browser\"\n[browser]\n[browser.commands.fill_form]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Command("fill_form")
	ok := []any{
		map[string]any{"ref": "e1", "text": "ada"},
		map[string]any{"selector": "#plan", "value": "pro"},
		map[string]any{"selector": "#terms", "checked": true},
		map[string]any{"ref": "e4", "checked": false},
	}
	got, err := c.Validate(map[string]any{"fields": ok})
	if err != nil {
		t.Fatalf("a text, an option and two checkboxes are refused: %v", err)
	}
	if rec := got["fields"].([]any)[3].(map[string]any); rec["checked"] != false {
		t.Errorf("checked: false validated as %#v", rec)
	}
	for _, tc := range []struct {
		name  string
		field map[string]any
	}{
		{"none", map[string]any{"selector": "#a"}},
		{"text and value", map[string]any{"selector": "#a", "text": "x", "value": "y"}},
		{"value and checked", map[string]any{"selector": "#a", "value": "y", "checked": true}},
	} {
		fields := append(append([]any(nil), ok[:2]...), tc.field)
		_, err := c.Validate(map[string]any{"fields": fields})
		if err == nil || !strings.Contains(err.Error(), "fields[2]") || !strings.Contains(err.Error(), "exactly one of text, value, checked") {
			t.Errorf("%s: Validate = %v, want an error naming fields[2] and the one-of rule", tc.name, err)
		}
	}
	if _, err := c.Validate(map[string]any{"fields": []any{map[string]any{"selector": "#a", "checked": "yes"}}}); err == nil || !strings.Contains(err.Error(), "fields[0].checked") {
		t.Errorf("checked as a string: Validate = %v", err)
	}
}

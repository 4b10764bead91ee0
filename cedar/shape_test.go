package cedar_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// shapeArgs gives every argument each built-in command takes, typed as the
// daemon sends them, so that every args attribute is checked.
var shapeArgs = map[string]map[string]any{
	"navigate":     {"url": "https://www.example.com/"},
	"snapshot":     {"selector": "main"},
	"click":        {"ref": "e1", "selector": "main"},
	"type_text":    {"ref": "e1", "selector": "#q", "text": "hello"},
	"submit_form":  {"ref": "e1", "selector": "form"},
	"screenshot":   {"full_page": true},
	"wait_for":     {"selector": "main", "text": "done", "timeout_ms": int64(5000)},
	"extract_html": {"selector": "main"},
	"execute_js":   {"expression": "1+1"},
	"scroll":       {"direction": "down", "amount": int64(3)},
}

// everyCommand is the shape of a daemon that may run every built-in command.
var everyCommand = []cedar.RequestShape{{Commands: cedar.BuiltinCommands, Args: shapeArgs}}

// shippedSchemaText is the shipped schema, edited by replacing old with
// new (each must occur), for schemas that differ from it in one way.
func shippedSchemaText(t testing.TB, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile(shippedSchema)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("shipped schema has no %q", edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return s
}

// TestLoadDirWithBuiltinSchema proves that a directory without a schema
// loads against LoadOptions.DefaultSchema, that the engine says so, that
// policies are still type-checked against it, and that without a default
// such a directory is refused as before.
func TestLoadDirWithBuiltinSchema(t *testing.T) {
	t.Parallel()
	builtin, err := os.ReadFile(shippedSchema)
	if err != nil {
		t.Fatal(err)
	}
	const good = `@id("ok") permit (principal, action == Web::Action::"browse", resource) when { resource.page_state.tab_count < 5 };`
	t.Run("loads with the built-in schema", func(t *testing.T) {
		t.Parallel()
		dir := writeDir(t, map[string]string{"p.cedar": good})
		e, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{DefaultSchema: builtin, Shapes: everyCommand})
		if err != nil {
			t.Fatalf("LoadDirWith: %v", err)
		}
		if got, want := e.SchemaFile(), "built-in schema (browsergate.cedarschema)"; got != want || !e.BuiltinSchema() {
			t.Errorf("SchemaFile() = %q, BuiltinSchema() = %v; want %q, true", got, e.BuiltinSchema(), want)
		}
		if src := e.Sources()[cedar.DefaultSchemaName]; string(src) != string(builtin) {
			t.Error("Sources() lacks the built-in schema, so a replay could not load the same engine")
		}
		if err := e.ValidateRequest(baseRequest("navigate")); err != nil {
			t.Errorf("ValidateRequest against the built-in schema: %v", err)
		}
	})
	t.Run("named default", func(t *testing.T) {
		t.Parallel()
		dir := writeDir(t, map[string]string{"p.cedar": good})
		e, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{DefaultSchema: builtin, DefaultSchemaName: "v2.cedarschema"})
		if err != nil || e.SchemaFile() != "built-in schema (v2.cedarschema)" {
			t.Fatalf("LoadDirWith = %v, %v; want the schema named v2.cedarschema", e.SchemaFile(), err)
		}
	})
	t.Run("policies still type-checked", func(t *testing.T) {
		t.Parallel()
		dir := writeDir(t, map[string]string{"p.cedar": `@id("typo") permit (principal, action, resource) when { resource.comand == "click" };`})
		_, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{DefaultSchema: builtin})
		if !errors.Is(err, cedar.ErrValidation) || !strings.Contains(err.Error(), "comand") {
			t.Errorf("error %v, want a validation error naming comand", err)
		}
	})
	t.Run("broken default named as built-in", func(t *testing.T) {
		t.Parallel()
		dir := writeDir(t, map[string]string{"p.cedar": good})
		_, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{DefaultSchema: []byte("namespace Web { entity")})
		if !errors.Is(err, cedar.ErrSchema) || !strings.Contains(err.Error(), "built-in schema (browsergate.cedarschema)") {
			t.Errorf("error %v, want a schema error naming the built-in schema", err)
		}
	})
	t.Run("without a default the directory is refused", func(t *testing.T) {
		t.Parallel()
		dir := writeDir(t, map[string]string{"p.cedar": good})
		for _, opts := range []*cedar.LoadOptions{nil, {}} {
			if _, err := cedar.LoadDirWith(dir, opts); !errors.Is(err, cedar.ErrNoSchema) {
				t.Errorf("LoadDirWith(%+v) error %v, want ErrNoSchema", opts, err)
			}
		}
		if _, err := cedar.LoadDir(dir); !errors.Is(err, cedar.ErrNoSchema) {
			t.Errorf("LoadDir error %v, want ErrNoSchema", err)
		}
	})
	t.Run("a schema of the directory wins", func(t *testing.T) {
		t.Parallel()
		dir := writeDir(t, withSchema(t, map[string]string{"p.cedar": good}))
		e, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{DefaultSchema: []byte("not used")})
		if err != nil || e.BuiltinSchema() || e.SchemaFile() != filepath.Join(dir, "browsergate.cedarschema") {
			t.Errorf("LoadDirWith = %v, %v; want the directory's own schema", e.SchemaFile(), err)
		}
	})
}

// TestLoadDirWithShapes proves that a directory whose own schema does not
// fit the requests the daemon sends is refused, with an error naming the
// schema file, the commands and what does not fit, and that the shipped
// schema fits every built-in command.
func TestLoadDirWithShapes(t *testing.T) {
	t.Parallel()
	const policy = `@id("ok") permit (principal, action, resource);`
	tests := []struct {
		name   string
		schema []string // edits to the shipped schema (old, new, ...)
		shapes []cedar.RequestShape
		want   []string // substrings of the error; none means it loads
	}{
		{name: "the shipped schema fits every command", shapes: everyCommand},
		{
			name:   "a page_state field the daemon sends is missing",
			schema: []string{"tab_count: Long,", ""},
			shapes: everyCommand,
			want:   []string{"{schema}: ", "every command", `attribute "page_state": unexpected attribute "tab_count"`},
		},
		{
			name:   "an argument the daemon sends is missing",
			schema: []string{"timeout_ms?: Long,", ""},
			shapes: everyCommand,
			want:   []string{"{schema}: ", "(command wait_for)", `unexpected attribute "timeout_ms"`},
		},
		{
			name:   "an argument several commands send is missing",
			schema: []string{"ref?: String,", ""},
			shapes: everyCommand,
			want:   []string{"(commands click, type_text, submit_form)", `unexpected attribute "ref"`},
		},
		{
			name:   "a counter the daemon sends is missing",
			schema: []string{"session_scroll_count: Long,", ""},
			shapes: everyCommand,
			want:   []string{"every command", "session_scroll_count"},
		},
		{
			name:   "an attribute the daemon never sends is required",
			schema: []string{"risk_tier: String,", "risk_tier: String,\n    department: String,"},
			shapes: everyCommand,
			want:   []string{"every command", "department"},
		},
		{
			name:   "an attribute of another type",
			schema: []string{"interaction_count: Long,", "interaction_count: String,"},
			shapes: everyCommand,
			want:   []string{"interaction_count"},
		},
		{
			name:   "a manifest's own resource type and action",
			shapes: []cedar.RequestShape{{Commands: []string{"navigate", "click"}, ResourceType: "Web::Tab", Action: "operate"}},
			want:   []string{"every command", `Web::Action::"operate"`, "Web::Tab"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeDir(t, map[string]string{"p.cedar": policy, "mine.cedarschema": shippedSchemaText(t, tt.schema...)})
			e, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{Shapes: tt.shapes})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("LoadDirWith: %v", err)
				}
				return
			}
			if e != nil || !errors.Is(err, cedar.ErrSchemaMismatch) {
				t.Fatalf("LoadDirWith = %v, %v; want ErrSchemaMismatch", e, err)
			}
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "{schema}", filepath.Join(dir, "mine.cedarschema"))
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

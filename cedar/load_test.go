package cedar_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

func TestLoadDirErrors(t *testing.T) {
	t.Parallel()
	const good = `@id("ok") permit (principal, action, resource);`
	tests := []struct {
		name  string
		files map[string]string
		is    error    // errors.Is target, if any
		want  []string // substrings the error must contain ({dir} is the dir)
	}{
		{
			name:  "syntax error names file line and column",
			files: map[string]string{"a.cedar": good + "\n\npermit (principal, action, resource)\nwhen { resource.x == };\n"},
			is:    cedar.ErrParse,
			want:  []string{`{dir}/a.cedar:4:22: expected an expression`, `found "}"`},
		},
		{
			name: "every bad file is reported",
			files: map[string]string{
				"a.cedar":    "permit (principal, action, resource) when { };",
				"b.cedar":    good,
				"c.cedar":    "\nforbid (principal, action resource);",
				"note.txt":   "not a policy {",
				"d.cedarsch": "ignored {",
			},
			is:   cedar.ErrParse,
			want: []string{"{dir}/a.cedar:1:", "{dir}/c.cedar:2:"},
		},
		{
			name: "duplicate id across files",
			files: map[string]string{
				"a.cedar": good,
				"b.cedar": "\n" + good,
			},
			is:   cedar.ErrDuplicateID,
			want: []string{`"ok"`, "{dir}/b.cedar:2", "{dir}/a.cedar:1"},
		},
		{
			name:  "duplicate id within a file",
			files: map[string]string{"a.cedar": good + "\n" + strings.Replace(good, "permit", "forbid", 1)},
			is:    cedar.ErrDuplicateID,
			want:  []string{"{dir}/a.cedar:2"},
		},
		{
			name:  "explicit id colliding with a default id",
			files: map[string]string{"a.cedar": "permit (principal, action, resource);\n" + `@id("a.cedar:1") forbid (principal, action, resource);`},
			is:    cedar.ErrDuplicateID,
		},
		{
			name:  "empty id",
			files: map[string]string{"a.cedar": `@id("") permit (principal, action, resource);`},
			is:    cedar.ErrParse,
			want:  []string{"empty @id"},
		},
		{
			name:  "empty dir",
			files: map[string]string{},
			is:    cedar.ErrNoPolicies,
		},
		{
			name:  "only comments and other files",
			files: map[string]string{"a.cedar": "// nothing yet\n", "README.md": "# hi"},
			is:    cedar.ErrNoPolicies,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeDir(t, withSchema(t, tc.files))
			e, err := cedar.LoadDir(dir)
			if err == nil {
				t.Fatalf("LoadDir succeeded with %d policies, want error", len(e.Policies()))
			}
			if e != nil {
				t.Error("LoadDir returned an engine with an error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			for _, w := range tc.want {
				w = strings.ReplaceAll(w, "{dir}", dir)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadDirParseErrorFields(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, withSchema(t, map[string]string{"x.cedar": "\n\n  permit (principal, action, resource) when { resource.a == };"}))
	_, err := cedar.LoadDir(dir)
	var pe *cedar.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
	if pe.File != filepath.Join(dir, "x.cedar") || pe.Line != 3 || pe.Column == 0 || pe.Msg == "" {
		t.Errorf("ParseError = %+v, want x.cedar line 3 with a column and message", pe)
	}
}

func TestLoadDirMissing(t *testing.T) {
	t.Parallel()
	_, err := cedar.LoadDir(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v, want os.ErrNotExist", err)
	}
}

// TestPolicies checks ids (annotation or file:line), files, lines, effects
// and load order, and that subdirectories are not read.
func TestPolicies(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, withSchema(t, map[string]string{
		"b.cedar": "// first\n\npermit (principal, action, resource);\n@id(\"named\")\nforbid (principal, action, resource) when { false };",
		"a.cedar": `@id("first-file") permit (principal, action, resource);`,
	}))
	if err := os.Mkdir(filepath.Join(dir, "sub.cedar"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub.cedar", "x.cedar"), []byte("not cedar"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := cedar.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := e.Policies()
	want := []cedar.PolicyInfo{
		{ID: "first-file", File: filepath.Join(dir, "a.cedar"), Line: 1, Effect: "permit"},
		{ID: "b.cedar:3", File: filepath.Join(dir, "b.cedar"), Line: 3, Effect: "permit"},
		{ID: "named", File: filepath.Join(dir, "b.cedar"), Line: 4, Effect: "forbid"},
	}
	if len(got) != len(want) {
		t.Fatalf("Policies() = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Policies()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	got[0].ID = "changed"
	if e.Policies()[0].ID != "first-file" {
		t.Error("Policies() exposes the engine's own slice")
	}
}

// TestSourcesReloadTheSameEngine: the sources an engine keeps load an
// engine with the same policies.
func TestSourcesReloadTheSameEngine(t *testing.T) {
	e, err := cedar.LoadDir("../policies")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, src := range e.Sources() {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, err := cedar.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := len(e.Policies()), len(again.Policies()); a != b || a == 0 {
		t.Fatalf("%d policies from the sources, %d originally", b, a)
	}
	for i, p := range again.Policies() {
		if p.ID != e.Policies()[i].ID {
			t.Errorf("policy %d: %s, originally %s", i, p.ID, e.Policies()[i].ID)
		}
	}
}

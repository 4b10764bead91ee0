package cedar_test

import (
	"errors"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// TestTallyCountsPoliciesAndPolicyFilesNotTheSchema: the schema is
// neither a policy nor a policy file, and a file with two policies counts
// two; the loaded engine and its recorded sources say the same.
func TestTallyCountsPoliciesAndPolicyFilesNotTheSchema(t *testing.T) {
	files := withSchema(t, map[string]string{
		"a.cedar":   `permit(principal, action, resource);`,
		"b.cedar":   "@id(\"one\") forbid(principal, action, resource);\n@id(\"two\") permit(principal, action, resource);",
		"README.md": "not a policy",
	})
	got, err := cedar.TallySources(files)
	if err != nil {
		t.Fatal(err)
	}
	if want := (cedar.Tally{Policies: 3, Files: 2}); got != want {
		t.Fatalf("TallySources = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "3 Cedar policies in 2 policy files" {
		t.Errorf("String() = %q", s)
	}
	e, err := cedar.LoadDir(writeDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if e.Tally() != got {
		t.Errorf("Engine.Tally = %+v, TallySources = %+v: the loaded engine and its sources must count alike", e.Tally(), got)
	}
	if sources := e.Sources(); len(sources) != 3 {
		t.Errorf("the engine keeps %d sources, want the schema and two policy files", len(sources))
	}
}

func TestTallyInTheSingular(t *testing.T) {
	if s := (cedar.Tally{Policies: 1, Files: 1}).String(); s != "1 Cedar policy in 1 policy file" {
		t.Errorf("String() = %q", s)
	}
}

// TestTallySourcesNamesAFileThatDoesNotParse: a recorded file that does
// not parse is an error that names it, never a count that leaves it out.
func TestTallySourcesNamesAFileThatDoesNotParse(t *testing.T) {
	_, err := cedar.TallySources(map[string]string{"bad.cedar": "permit(principal"})
	var pe *cedar.ParseError
	if !errors.As(err, &pe) || pe.File != "bad.cedar" {
		t.Fatalf("err = %v, want a ParseError naming bad.cedar", err)
	}
}

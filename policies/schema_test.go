package policies_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/policies"
)

// TestSchemaIsTheShippedFile proves the built-in schema is the file in this
// directory, byte for byte, under its name.
func TestSchemaIsTheShippedFile(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(policies.SchemaName)
	if err != nil {
		t.Fatal(err)
	}
	if got := policies.Schema(); !bytes.Equal(got, want) {
		t.Error("Schema() differs from browsergate.cedarschema")
	}
	if policies.SchemaName != cedar.DefaultSchemaName {
		t.Errorf("SchemaName %q, cedar.DefaultSchemaName %q", policies.SchemaName, cedar.DefaultSchemaName)
	}
}

// TestShippedPoliciesLoadWithTheBuiltinSchema proves the shipped policies,
// copied without their schema, load against the built-in one and every
// built-in command's request fits it.
func TestShippedPoliciesLoadWithTheBuiltinSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, err := filepath.Glob("*.cedar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped policies: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{
		DefaultSchema:     policies.Schema(),
		DefaultSchemaName: policies.SchemaName,
		Shapes:            []cedar.RequestShape{{Commands: cedar.BuiltinCommands}},
	})
	if err != nil {
		t.Fatalf("LoadDirWith: %v", err)
	}
	if !e.BuiltinSchema() || e.SchemaFile() != "built-in schema (browsergate.cedarschema)" {
		t.Errorf("schema %q (built-in %v), want the built-in one", e.SchemaFile(), e.BuiltinSchema())
	}
}

package toolclad_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/policies"
	"github.com/browsergate/browsergate/toolclad"
)

// TestArgSamples proves that ArgSamples gives every argument of every
// built-in command a value that the command's own checks accept, and that
// the shipped Cedar schema fits requests carrying them: the shape a
// policy directory's schema is checked against at load.
func TestArgSamples(t *testing.T) {
	t.Parallel()
	samples := toolclad.ArgSamples()
	m := allBuiltins(t)
	for _, c := range m.Commands {
		for _, a := range c.Args {
			v, ok := samples[c.Name][a.Name]
			if !ok {
				t.Errorf("%s.%s has no sample", c.Name, a.Name)
				continue
			}
			// One argument at a time, plus what the command requires.
			args := map[string]any{a.Name: v}
			for _, r := range c.Args {
				if r.Required {
					args[r.Name] = samples[c.Name][r.Name]
				}
			}
			if c.Name == "wait_for" && (a.Name == "timeout_ms" || a.Name == "name") {
				args["text"] = samples["wait_for"]["text"] // wait_for needs one of selector, text
			}
			if c.Name == "upload_file" && a.Name == "file" {
				args["ref"] = samples[c.Name]["ref"] // one of ref, selector
			}
			if c.Name == "select_option" { // one of ref, selector and one of value, label
				if a.Name != "ref" && a.Name != "selector" {
					args["ref"] = samples[c.Name]["ref"]
				}
				if a.Name != "value" && a.Name != "label" {
					args["value"] = samples[c.Name]["value"]
				}
			}
			if _, err := c.Validate(jsonNumbers(args)); err != nil {
				t.Errorf("%s.%s sample %#v refused: %v", c.Name, a.Name, v, err)
			}
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(`@id("all") permit (principal, action, resource);`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := cedar.LoadDirWith(dir, &cedar.LoadOptions{
		DefaultSchema: policies.Schema(),
		Shapes:        []cedar.RequestShape{{Commands: toolclad.BuiltinCommands(), Args: samples}},
	})
	if err != nil {
		t.Errorf("the shipped schema does not fit requests with every argument: %v", err)
	}
}

// jsonNumbers turns int64 values into float64, as JSON decoding gives them
// to Validate.
func jsonNumbers(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if n, ok := v.(int64); ok {
			v = float64(n)
		}
		out[k] = v
	}
	return out
}

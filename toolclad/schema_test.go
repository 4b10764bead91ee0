package toolclad_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/browsergate/browsergate/toolclad"
)

// TestInputSchemaGolden pins the published schema of every built-in
// command (full signatures) and of the narrowed commands in full.toml.
func TestInputSchemaGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, manifest, golden string }{
		{"builtins", "", "testdata/schema-builtins.golden"},
		{"full", "testdata/good/full.toml", "testdata/schema-full.golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var m *toolclad.Manifest
			if tc.manifest == "" {
				m = allBuiltins(t)
			} else {
				m = mustLoad(t, tc.manifest)
			}
			schemas := map[string]any{}
			for _, c := range m.Commands {
				schemas[c.Name] = map[string]any{"description": c.ToolDescription(), "inputSchema": c.InputSchema()}
			}
			got, err := json.MarshalIndent(schemas, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			if *update {
				if err := os.WriteFile(tc.golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("schemas changed:\n%s", got)
			}
		})
	}
}

// TestInputSchema proves the shape rules: integer is "integer", enum lists
// its values, required is listed, no additional properties, and every
// property has a description; and every schema is valid JSON Schema that
// accepts what Validate accepts.
func TestInputSchema(t *testing.T) {
	t.Parallel()
	m := allBuiltins(t)
	tests := []struct {
		name    string
		command string
		path    []string
		want    any
	}{
		{"object", "navigate", []string{"type"}, "object"},
		{"closed", "navigate", []string{"additionalProperties"}, false},
		{"required", "navigate", []string{"required"}, []any{"url"}},
		{"url format", "navigate", []string{"properties", "url", "format"}, "uri"},
		{"integer", "scroll", []string{"properties", "amount", "type"}, "integer"},
		{"minimum", "scroll", []string{"properties", "amount", "minimum"}, float64(1)},
		{"maximum", "scroll", []string{"properties", "amount", "maximum"}, float64(10)},
		{"integer default", "scroll", []string{"properties", "amount", "default"}, float64(3)},
		{"enum", "scroll", []string{"properties", "direction", "enum"}, []any{"up", "down"}},
		{"no required", "scroll", []string{"required"}, nil},
		{"boolean", "screenshot", []string{"properties", "full_page", "type"}, "boolean"},
		{"ref pattern", "click", []string{"properties", "ref", "pattern"}, "^e[0-9]{1,6}$"},
		{"selector maxLength", "click", []string{"properties", "selector", "maxLength"}, float64(1024)},
		{"no args", "go_back", []string{"properties"}, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v any = roundTrip(t, m.Command(tt.command).InputSchema())
			for _, k := range tt.path {
				obj, _ := v.(map[string]any)
				v = obj[k]
			}
			if !reflect.DeepEqual(v, tt.want) {
				t.Errorf("%s %v = %#v, want %#v", tt.command, tt.path, v, tt.want)
			}
		})
	}
	for _, c := range m.Commands {
		t.Run("valid/"+c.Name, func(t *testing.T) {
			t.Parallel()
			s := roundTrip(t, c.InputSchema())
			for name, p := range s["properties"].(map[string]any) {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("property %s has no description", name)
				}
			}
			data, _ := json.Marshal(s)
			var js jsonschema.Schema
			if err := json.Unmarshal(data, &js); err != nil {
				t.Fatal(err)
			}
			if _, err := js.Resolve(nil); err != nil {
				t.Fatalf("schema does not resolve: %v", err)
			}
		})
	}
}

// allBuiltins is a manifest holding every built-in command: the
// browser's, and (from a second manifest with engine = "http") the
// browserless engine's, in built-in order.
func allBuiltins(t *testing.T) *toolclad.Manifest {
	t.Helper()
	var all *toolclad.Manifest
	for _, engine := range []string{"cdp-direct", "http"} {
		doc := "[tool]\nname = \"all\"\nmode = \"browser\"\n[browser]\nengine = \"" + engine + "\"\n" +
			"[browser.files]\nupload_dir = \".\"\ndownload_dir = \".\"\nstate_dir = " + strconv.Quote(toolclad.OwnerOnlyDir(t)) + "\n"
		if engine == "http" {
			doc += "[browser.search]\nbackend = \"duckduckgo\"\n"
		}
		for _, name := range toolclad.BuiltinCommands() {
			if toolclad.IsHTTPCommand(name) == (engine == "http") {
				doc += "[browser.commands." + name + "]\n"
			}
		}
		m, err := toolclad.Parse("all.toml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if all == nil {
			all = m
		} else {
			all.Commands = append(all.Commands, m.Commands...)
		}
	}
	return all
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

package cedar_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
)

// TestShippedSchemaLoads checks the shipped directory validates against its
// own schema and that the engine names it.
func TestShippedSchemaLoads(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	if got := e.SchemaFile(); got != shippedSchema {
		t.Errorf("SchemaFile() = %q, want %q", got, shippedSchema)
	}
}

// TestLoadDirSchemaErrors checks each kind of schema problem fails the load
// with the file, the position and the problem.
func TestLoadDirSchemaErrors(t *testing.T) {
	t.Parallel()
	const browse = `permit (principal, action == Web::Action::"browse", resource)`
	tests := []struct {
		name   string
		files  map[string]string
		schema bool     // add the shipped schema
		is     error    // errors.Is target
		want   []string // substrings of the error ({dir} is the dir)
		count  int      // number of joined errors, when checked
	}{
		{
			name:   "typo in an attribute",
			files:  map[string]string{"p.cedar": "// comand is not an attribute\n@id(\"typo\")\n" + browse + "\nwhen { resource.comand == \"click\" };\n"},
			schema: true,
			is:     cedar.ErrValidation,
			want:   []string{"{dir}/p.cedar:4:17: ", `policy "typo"`, "attribute `comand` on entity type `Web::BrowserSession` not found"},
		},
		{
			name:   "wrong type",
			files:  map[string]string{"p.cedar": "@id(\"tier\") " + browse + " when { resource.risk_tier == 3 };"},
			schema: true,
			is:     cedar.ErrValidation,
			want:   []string{"{dir}/p.cedar:1:1: ", `policy "tier"`, "the types Long and String are not compatible"},
		},
		{
			name:   "unknown entity type",
			files:  map[string]string{"p.cedar": "\n@id(\"user\") permit (principal == Web::User::\"alice\", action, resource);"},
			schema: true,
			is:     cedar.ErrValidation,
			want:   []string{"{dir}/p.cedar:2:34: ", `policy "user"`, "unrecognized entity type `Web::User`"},
		},
		{
			name:   "unknown action",
			files:  map[string]string{"p.cedar": `@id("act") permit (principal, action == Web::Action::"read", resource);`},
			schema: true,
			is:     cedar.ErrValidation,
			want:   []string{"{dir}/p.cedar:1:41: ", "unrecognized action `Web::Action::\"read\"`"},
		},
		{
			name:   "optional argument read without has",
			files:  map[string]string{"p.cedar": "@id(\"url\") " + browse + "\nwhen { resource.url == \"x\" && resource.args.url like \"https://*\" };"},
			schema: true,
			is:     cedar.ErrValidation,
			want:   []string{"{dir}/p.cedar:2:40: ", "optional attribute `args.url`"},
		},
		{
			name:   "policy without an id is named by file and line",
			files:  map[string]string{"p.cedar": "\n\n" + browse + " when { resource.page_state.titel == \"\" };"},
			schema: true,
			is:     cedar.ErrValidation,
			want:   []string{"{dir}/p.cedar:3:", `policy "p.cedar:3"`, "titel"},
		},
		{
			name: "every problem of every file",
			files: map[string]string{
				"a.cedar": `@id("a1") ` + browse + " when { resource.comand == \"x\" };\n" +
					`@id("a2") ` + browse + " when { resource.interaction_count == \"3\" };\n",
				"b.cedar": `@id("b1") ` + browse + " when { resource.page_state.tabs > 1 };",
				"c.cedar": "permit (principal, action, resource",
			},
			schema: true,
			want:   []string{`"a1"`, `"a2"`, `"b1"`, "{dir}/c.cedar:"},
			count:  4,
		},
		{
			name:  "missing schema",
			files: map[string]string{"p.cedar": `@id("ok") permit (principal, action, resource);`},
			is:    cedar.ErrNoSchema,
			want:  []string{"{dir}", "copy policies/browsergate.cedarschema"},
		},
		{
			name:  "missing schema and a broken policy",
			files: map[string]string{"p.cedar": `permit (principal, action, resource`},
			is:    cedar.ErrNoSchema,
			want:  []string{"{dir}/p.cedar:1:"},
			count: 2,
		},
		{
			name: "schema syntax error",
			files: map[string]string{
				"s.cedarschema": "namespace Web {\n  entity Agent = { name: String ;\n}",
				"p.cedar":       `@id("ok") permit (principal, action, resource);`,
			},
			is:   cedar.ErrSchema,
			want: []string{"{dir}/s.cedarschema:2:33: schema: "},
		},
		{
			name: "schema with an undefined type",
			files: map[string]string{
				"s.cedarschema": "namespace Web {\n  entity Agent;\n  entity Session = {\n    owner: Agnt,\n  };\n}",
				"p.cedar":       `@id("ok") permit (principal, action, resource);`,
			},
			is:   cedar.ErrSchema,
			want: []string{"{dir}/s.cedarschema:4:12: schema: ", `undefined type "Agnt"`},
		},
		{
			name: "two schemas",
			files: map[string]string{
				"a.cedarschema": "entity A;",
				"b.cedarschema": "entity B;",
				"p.cedar":       `@id("ok") permit (principal, action, resource);`,
			},
			is:   cedar.ErrSchema,
			want: []string{"a.cedarschema, b.cedarschema"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := tc.files
			if tc.schema {
				files = withSchema(t, files)
			}
			dir := writeDir(t, files)
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
			if tc.count > 0 {
				if n := len(strings.Split(err.Error(), "\n")); n != tc.count {
					t.Errorf("%d problems reported, want %d:\n%v", n, tc.count, err)
				}
			}
		})
	}
}

// TestValidationErrorFields checks the typed error a caller can pick out.
func TestValidationErrorFields(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, withSchema(t, map[string]string{
		"p.cedar": "@id(\"typo\")\nforbid (principal, action, resource)\n  when { resource.human_aproved };",
	}))
	_, err := cedar.LoadDir(dir)
	var ve *cedar.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	want := cedar.ValidationError{File: filepath.Join(dir, "p.cedar"), Line: 3, Column: 19, PolicyID: "typo",
		Msg: "attribute `human_aproved` on entity type `Web::BrowserSession` not found"}
	if *ve != want {
		t.Errorf("ValidationError = %+v, want %+v", *ve, want)
	}
}

// TestSchemaErrorFields checks a schema parse error keeps the parser's
// position.
func TestSchemaErrorFields(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{
		"x.cedarschema": "namespace Web {\n\n  entity A in [;\n}",
		"p.cedar":       `permit (principal, action, resource);`,
	})
	_, err := cedar.LoadDir(dir)
	var se *cedar.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SchemaError", err)
	}
	if se.File != filepath.Join(dir, "x.cedarschema") || se.Line != 3 || se.Column == 0 || se.Msg == "" {
		t.Errorf("SchemaError = %+v, want x.cedarschema line 3 with a column and message", se)
	}
}

// TestShippedSchemaMatchesRequests proves the shipped schema is the request
// model: a complete request conforms for every command, page and approval.
func TestShippedSchemaMatchesRequests(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	for _, cmd := range commands {
		r := baseRequest(cmd)
		r.HumanApproved = true
		r.Args = map[string]any{"url": "https://docs.example.com/", "ref": "e12", "selector": "#q", "text": "hi",
			"full_page": true, "timeout_ms": 5000.0, "expression": "1+1", "direction": "down", "amount": 300}
		if err := e.ValidateRequest(r); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
}

func TestValidateRequest(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	tests := []struct {
		name string
		edit func(*cedar.Request)
		want string // "" means the request conforms
	}{
		{"conforming", nil, ""},
		{"no args, no url, no domain sets", func(r *cedar.Request) {
			r.Args, r.URL, r.URLDomain, r.DomainSets = nil, "", "", nil
		}, ""},
		{"domain in a custom set", func(r *cedar.Request) { r.DomainSets = []string{"allowed", "intranet"} }, ""},
		{"zero time means now", func(r *cedar.Request) { r.Time = time.Time{} }, ""},
		{"missing counter", func(r *cedar.Request) { delete(r.Counters, "session_scroll_count") },
			`entity Web::BrowserSession::"s1": missing required attribute "session_scroll_count"`},
		{"unknown counter", func(r *cedar.Request) { r.Counters["session_fly_count"] = 1 },
			`unexpected attribute "session_fly_count"`},
		{"missing page state field", func(r *cedar.Request) { delete(r.PageState, "tab_count") },
			`missing required attribute "tab_count"`},
		{"page state field of the wrong type", func(r *cedar.Request) { r.PageState["has_forms"] = "yes" },
			`attribute "has_forms": expected Bool`},
		{"unknown argument", func(r *cedar.Request) { r.Args = map[string]any{"selecter": "#q"} },
			`unexpected attribute "selecter"`},
		{"argument of the wrong type", func(r *cedar.Request) { r.Args = map[string]any{"amount": "300"} },
			`attribute "amount": expected Long`},
		{"fractional number argument", func(r *cedar.Request) { r.Args = map[string]any{"timeout_ms": 1.5} },
			`attribute "timeout_ms": expected Long`},
		{"other action", func(r *cedar.Request) { r.Action = "admin" },
			"request: action `Web::Action::\"admin\"` does not exist"},
		{"other resource type", func(r *cedar.Request) { r.ResourceType = "Shop::Session" },
			"resource type `Shop::Session` is not declared"},
		{"counter shadowing a built-in", func(r *cedar.Request) { r.Counters["url"] = 1 },
			`counter "url" shadows a built-in attribute`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRequest("click")
			if tc.edit != nil {
				tc.edit(r)
			}
			err := e.ValidateRequest(r)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("ValidateRequest: %v, want nil", err)
			case tc.want == "":
			case err == nil:
				t.Errorf("ValidateRequest accepted the request, want %q", tc.want)
			case !errors.Is(err, cedar.ErrRequestSchema) || !strings.Contains(err.Error(), tc.want):
				t.Errorf("ValidateRequest = %v, want ErrRequestSchema containing %q", err, tc.want)
			}
		})
	}
}

func TestValidateRequestWithoutEngine(t *testing.T) {
	t.Parallel()
	for name, e := range map[string]*cedar.Engine{"nil engine": nil, "zero engine": {}} {
		if err := e.ValidateRequest(baseRequest("click")); !errors.Is(err, cedar.ErrRequestSchema) {
			t.Errorf("%s: ValidateRequest = %v, want ErrRequestSchema", name, err)
		}
	}
	if err := loadShipped(t).ValidateRequest(nil); !errors.Is(err, cedar.ErrRequestSchema) {
		t.Errorf("nil request: ValidateRequest = %v, want ErrRequestSchema", err)
	}
}

// TestShippedSchemaIsTheOnlyOne guards the rule LoadDir enforces on the
// shipped directory itself.
func TestShippedSchemaIsTheOnlyOne(t *testing.T) {
	t.Parallel()
	matches, err := filepath.Glob(filepath.Join(shippedDir, "*"+cedar.SchemaExt))
	if err != nil || len(matches) != 1 || matches[0] != shippedSchema {
		t.Errorf("schemas in %s = %v (%v), want only %s", shippedDir, matches, err, shippedSchema)
	}
	if _, err := os.Stat(filepath.Join("..", cedar.ShippedSchema)); err != nil {
		t.Errorf("ShippedSchema %q does not exist: %v", cedar.ShippedSchema, err)
	}
}

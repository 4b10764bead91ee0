package cedar_test

import "testing"

// TestPoliciesReadListArguments: against the shipped schema, a policy
// reads upload_file's files as a Set of Strings, as the executor sends
// them (Validate's []any): a forbid on one file holds when the list holds
// it among others, and not when it does not. fill_form's fields fit the
// schema as a Set of records, text, option (value) and checkbox (checked)
// fields alike; a policy can test that a call has them (Cedar's
// typechecker does not let a record literal, whose members are all
// present, be looked for in a set of records whose members are optional,
// so a policy does not pick out one field).
func TestPoliciesReadListArguments(t *testing.T) {
	t.Parallel()
	e := loadFiles(t, map[string]string{"p.cedar": `
@id("permit") permit (principal, action, resource);
@id("no-payroll") forbid (principal, action, resource)
when { resource.command == "upload_file" && resource.args has files && resource.args.files.contains("payroll.xlsx") };
@id("no-batch-on-admin") forbid (principal, action, resource)
when { resource.command == "fill_form" && resource.args has fields && resource.url like "https://admin.*" };
`})
	tests := []struct {
		name, command string
		args          map[string]any
		url           string // "": baseRequest's
		allowed       bool
	}{
		{"files without the forbidden one", "upload_file", map[string]any{"selector": "#f", "files": []any{"a.pdf", "b.pdf"}}, "", true},
		{"files with the forbidden one", "upload_file", map[string]any{"selector": "#f", "files": []any{"a.pdf", "payroll.xlsx"}}, "", false},
		{"fields elsewhere", "fill_form", map[string]any{"fields": []any{
			map[string]any{"ref": "e2", "text": "ada"}, map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"}}}, "", true},
		{"fields on the forbidden site", "fill_form", map[string]any{"fields": []any{
			map[string]any{"ref": "e2", "text": "ada"}, map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"}}}, "https://admin.example.com/", false},
		{"an option and a checkbox elsewhere", "fill_form", map[string]any{"fields": []any{
			map[string]any{"ref": "e2", "text": "ada"}, map[string]any{"selector": "#plan", "value": "pro"}, map[string]any{"ref": "e5", "checked": true}}}, "", true},
		{"an option and a checkbox on the forbidden site", "fill_form", map[string]any{"fields": []any{
			map[string]any{"selector": "#plan", "value": "pro"}, map[string]any{"ref": "e5", "checked": false}}}, "https://admin.example.com/", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRequest(tc.command)
			r.Args = tc.args
			if tc.url != "" {
				r.URL = tc.url
			}
			if err := e.ValidateRequest(r); err != nil {
				t.Fatalf("the request does not fit the shipped schema: %v", err)
			}
			if d := e.Decide(r); d.Allowed != tc.allowed {
				t.Errorf("Decision = %+v, want allowed %v", d, tc.allowed)
			}
		})
	}
}

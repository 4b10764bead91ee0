package toolclad_test

import (
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestClampIsWhatTheManifestSays proves ToolClad's rule for integers: a
// declared argument refuses out-of-range values unless it says clamp =
// true (it does not inherit the built-in's clamping); a command declared
// without args keeps the built-in signature, clamping included.
func TestClampIsWhatTheManifestSays(t *testing.T) {
	t.Parallel()
	const head = "[tool]\nname = \"c\"\n[browser.commands.wait_for]\n"
	tests := []struct {
		name    string
		decl    string // the wait_for declaration's body
		timeout any    // the timeout_ms given
		want    any    // the validated value; nil when refused
		rule    string // the refusal's rule
	}{
		{"declared, no clamp: below min refused", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", min = 100 }`, 5.0, nil, "min"},
		{"declared, no clamp: above max refused", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", max = 1000, default = 500 }`, 5000.0, nil, "max"},
		{"declared, no clamp: above the built-in max refused", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", min = 100 }`, 40000.0, nil, "max"},
		{"declared, no clamp: in range kept", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", min = 100 }`, 250.0, int64(250), ""},
		{"declared, clamp = false: refused", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", min = 100, clamp = false }`, 5.0, nil, "min"},
		{"declared, clamp = true: below min clamped", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", min = 100, clamp = true }`, 5.0, int64(100), ""},
		{"declared, clamp = true: above max clamped", `args.selector = { type = "string" }` + "\n" + `args.timeout_ms = { type = "integer", max = 1000, default = 500, clamp = true }`, 5000.0, int64(1000), ""},
		{"no args declared: built-in clamps below", "", 5.0, int64(100), ""},
		{"no args declared: built-in clamps above", "", 99999.0, int64(30000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := toolclad.Parse("clamp.toml", []byte(head+tt.decl+"\n"))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := m.Command("wait_for").Validate(map[string]any{"selector": "#x", "timeout_ms": tt.timeout})
			if tt.want == nil {
				aes := toolclad.ArgErrors(err)
				if len(aes) != 1 || aes[0].Arg != "timeout_ms" || aes[0].Rule != tt.rule {
					t.Fatalf("Validate(timeout_ms=%v) = %v, %v; want refused by rule %q", tt.timeout, got, err, tt.rule)
				}
				return
			}
			if err != nil || got["timeout_ms"] != tt.want {
				t.Errorf("Validate(timeout_ms=%v) = %v, %v; want %v", tt.timeout, got["timeout_ms"], err, tt.want)
			}
		})
	}
}

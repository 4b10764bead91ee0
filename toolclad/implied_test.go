package toolclad_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// impliedTiers are the read-only commands of ToolClad's browser-mode set at
// the tiers of its "Commands Reference Table" (docs/browser-mode.md; scroll
// from the same document's scroll example), in built-in order.
var impliedTiers = []struct{ name, tier string }{
	{"navigate", "medium"},
	{"snapshot", "low"},
	{"screenshot", "low"},
	{"go_back", "low"},
	{"wait_for", "low"},
	{"extract_html", "low"},
	{"list_tabs", "low"},
	{"scroll", "low"},
	{"network_timing", "low"},
}

// TestImpliedCommands proves that a browser manifest with no commands
// loads with exactly ToolClad's read-only commands at their documented
// tiers and full built-in signatures, says so, and never gets a command
// that changes a page's data.
func TestImpliedCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, doc string
	}{
		{name: "ToolClad's chrome_live example", file: "testdata/good/chrome_live.toml"},
		{name: "empty commands table", doc: "[tool]\nname = \"e\"\nmode = \"browser\"\n[browser.commands]\n"},
		{name: "mode without a browser table", doc: "[tool]\nname = \"e\"\nmode = \"browser\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var m *toolclad.Manifest
			if tt.file != "" {
				m = mustLoad(t, tt.file)
			} else {
				var err error
				if m, err = toolclad.Parse("implied.toml", []byte(tt.doc)); err != nil {
					t.Fatalf("Parse: %v", err)
				}
			}
			if !m.ImpliedCommands {
				t.Error("ImpliedCommands = false")
			}
			if len(m.Commands) != len(impliedTiers) {
				t.Fatalf("commands %s, want the %d implied ones", commandNames(m), len(impliedTiers))
			}
			for i, want := range impliedTiers {
				c := m.Commands[i]
				if c.Name != want.name || c.RiskTier != want.tier {
					t.Errorf("command %d = %s (%s), want %s (%s)", i, c.Name, c.RiskTier, want.name, want.tier)
				}
				if c.HumanApproval {
					t.Errorf("%s needs approval", c.Name)
				}
			}
			for _, mutating := range []string{"click", "type_text", "submit_form", "execute_js"} {
				if m.Command(mutating) != nil {
					t.Errorf("mutating command %s implied", mutating)
				}
			}
			// Full built-in signatures: navigate scope-checked, wait_for's
			// timeout clamping as built in.
			if a := m.Command("navigate").Arg("url"); a == nil || !a.ScopeCheck || !a.Required {
				t.Errorf("navigate url = %+v, want the built-in scope-checked argument", a)
			}
			if a := m.Command("wait_for").Arg("timeout_ms"); a == nil || !a.Clamp {
				t.Errorf("wait_for timeout_ms = %+v, want the built-in (clamping)", a)
			}
		})
	}
	names := make([]string, len(impliedTiers))
	for i, it := range impliedTiers {
		names[i] = it.name
	}
	if got := toolclad.ImpliedCommands(); !slices.Equal(got, names) {
		t.Errorf("ImpliedCommands() = %v, want %v", got, names)
	}
}

// TestDeclaredCommandsAreNotImplied proves that declaring one command
// exposes that one only, and that a [browser.commands] of the wrong type
// is an error, not an implied set.
func TestDeclaredCommandsAreNotImplied(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("one.toml", []byte("[tool]\nname = \"one\"\n[browser.commands.click]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ImpliedCommands || commandNames(m) != "click" {
		t.Errorf("commands %s, implied %v; want click only, not implied", commandNames(m), m.ImpliedCommands)
	}
	_, err = toolclad.Parse("bad.toml", []byte("[tool]\nname = \"bad\"\n[browser]\ncommands = 3\n"))
	var le *toolclad.LoadError
	if !errors.As(err, &le) || len(le.Problems) != 1 || !strings.Contains(err.Error(), "browser.commands: wrong type") {
		t.Errorf("commands = 3: error %v, want one wrong-type problem", err)
	}
}

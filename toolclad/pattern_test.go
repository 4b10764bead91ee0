package toolclad_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestADeclaredPatternNarrowsTheBuiltinOne: a manifest's pattern on an
// argument whose built-in signature has a pattern of its own adds to it:
// a value must match both, so declaring one cannot let through what the
// built-in refuses (press_key's key shape, a tab id's).
func TestADeclaredPatternNarrowsTheBuiltinOne(t *testing.T) {
	m, err := toolclad.Parse("p.toml", []byte(`[tool]
name = "p"
mode = "browser"
[browser]
[browser.commands.press_key]
args.key = { type = "string", pattern = "." }
[browser.commands.switch_tab]
args.tab = { type = "string", pattern = "^t[0-5]$" }
`))
	if err != nil {
		t.Fatal(err)
	}
	key := m.Command("press_key")
	if _, err := key.Validate(map[string]any{"key": "Enter"}); err != nil {
		t.Errorf("a key both patterns take is refused: %v", err)
	}
	if _, err := key.Validate(map[string]any{"key": "Enter\nx"}); err == nil || !strings.Contains(err.Error(), "built-in pattern") {
		t.Errorf("a key the built-in pattern refuses passed the declared %q: %v", ".", err)
	}
	tab := m.Command("switch_tab")
	if _, err := tab.Validate(map[string]any{"tab": "t7"}); err == nil {
		t.Error("a tab the declared pattern refuses passed")
	}
	if _, err := tab.Validate(map[string]any{"tab": "t3"}); err != nil {
		t.Errorf("a tab both patterns take is refused: %v", err)
	}
}

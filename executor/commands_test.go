package executor

import (
	"slices"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestCommandTableMatchesToolclad: the executor's command table and
// toolclad's built-in commands are the same set.
func TestCommandTableMatchesToolclad(t *testing.T) {
	builtins := toolclad.BuiltinCommands()
	for _, name := range builtins {
		if spec, ok := commandTable[name]; !ok || spec.act == nil {
			t.Errorf("toolclad has %s, the command table does not", name)
		}
	}
	for name := range commandTable {
		if !slices.Contains(builtins, name) {
			t.Errorf("the command table has %s, toolclad does not", name)
		}
	}
}

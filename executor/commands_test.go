package executor

import (
	"slices"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit/commandtable"
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

// TestCommandTableTellsTheGateWhatItObserves: what the command table tells
// the gate of each command — the facts to observe, whether it changes the
// session's tab — is what gate's decision tests run with
// (commandtable.Observations, commandtable.TabCommands): a command that stopped
// observing its element, or stopped counting as a tab change, would skip
// the decision's checks on it (where a click leads, the secret-tab rule).
func TestCommandTableTellsTheGateWhatItObserves(t *testing.T) {
	for name, spec := range commandTable {
		if want := commandtable.Observations[name]; spec.observes != want {
			t.Errorf("%s observes %v in the command table, %v in the gate's tests", name, spec.observes, want)
		}
		if want := commandtable.TabCommands[name]; spec.changesTab != want {
			t.Errorf("%s changes the tab: %v in the command table, %v in the gate's tests", name, spec.changesTab, want)
		}
	}
	for name := range commandtable.Observations {
		if _, ok := commandTable[name]; !ok {
			t.Errorf("the gate's tests observe for %s, which the command table does not have", name)
		}
	}
	for name := range commandtable.TabCommands {
		if _, ok := commandTable[name]; !ok {
			t.Errorf("the gate's tests count %s as a tab change, which the command table does not have", name)
		}
	}
}

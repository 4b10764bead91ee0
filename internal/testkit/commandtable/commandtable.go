// Package commandtable holds, for tests, what the executor's command table
// tells the gate of each command. It is a package of its own so that gate's
// tests can import it (testkit is imported by gate's internal tests).
package commandtable

import "github.com/browsergate/browsergate/gate"

// What the executor's command table tells the gate of each command: the
// facts the decision needs beyond the page state (Observations; a command
// not named needs none), and the commands that change the tab the session
// acts in (TabCommands). gate's decision tests build their questions from
// these, and the executor's tests hold its command table to them, so the
// decision's tests test the table the daemon runs.
var (
	Observations = map[string]gate.Observation{
		"click": gate.ObserveClick, "type_text": gate.ObserveField, "submit_form": gate.ObserveSubmit,
		"go_back": gate.ObserveHistory, "go_forward": gate.ObserveHistory, "switch_tab": gate.ObserveTab,
		"close_tab": gate.ObserveTab, "press_key": gate.ObserveKey, "select_option": gate.ObserveSelect,
		"hover": gate.ObservePoint, "upload_file": gate.ObserveUpload, "execute_js": gate.ObserveScript, "drag": gate.ObserveDrop,
		"fill_form":          gate.ObserveFields,
		"save_storage_state": gate.ObserveStorageState, "load_storage_state": gate.ObserveStorageState,
	}
	TabCommands = map[string]bool{"switch_tab": true, "new_tab": true, "close_tab": true, "new_context": true, "switch_context": true}
)

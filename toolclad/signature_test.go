package toolclad_test

import (
	"encoding/json"
	"os"
	"testing"
)

// TestCommandsDeclaredWithoutArgsKeepTheirSignature: every command that
// existed before the peers' capabilities (#37) publishes, declared without
// args, exactly the schema and description it did then, byte for byte. So
// a manifest that declares nothing new offers the agent nothing new. The
// golden file is never regenerated: a change to it is a change to what
// existing manifests offer.
func TestCommandsDeclaredWithoutArgsKeepTheirSignature(t *testing.T) {
	b, err := os.ReadFile("testdata/schema-before-peers.golden")
	if err != nil {
		t.Fatal(err)
	}
	var before map[string]json.RawMessage
	if err := json.Unmarshal(b, &before); err != nil {
		t.Fatal(err)
	}
	m := allBuiltins(t)
	for name, want := range before {
		c := m.Command(name)
		if c == nil {
			t.Errorf("%s is no longer a command", name)
			continue
		}
		got, err := json.Marshal(map[string]any{"description": c.ToolDescription(), "inputSchema": c.InputSchema()})
		if err != nil {
			t.Fatal(err)
		}
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(w)
		gb, _ := json.Marshal(g)
		if string(wb) != string(gb) {
			t.Errorf("%s declared without args changed:\n got %s\nwant %s", name, gb, wb)
		}
	}
}

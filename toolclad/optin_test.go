package toolclad

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// withBuiltin adds b to the built-in table for the test's duration.
func withBuiltin(t *testing.T, b *builtinCommand) {
	t.Helper()
	saved := builtins
	builtins = append(append([]*builtinCommand(nil), builtins...), b)
	t.Cleanup(func() { builtins = saved })
}

// TestAnOptInArgumentIsOfferedOnlyWhereDeclared: a command declared
// without args (or implied) lacks its opt-in arguments, and so do the
// one-of groups over them; declaring one in args offers it.
func TestAnOptInArgumentIsOfferedOnlyWhereDeclared(t *testing.T) {
	withBuiltin(t, &builtinCommand{
		name: "optin_probe",
		args: []Arg{
			{Name: "ref", Type: TypeRef},
			{Name: "selector", Type: TypeSelector},
			{Name: "frame", Type: TypeString, OptIn: true},
			{Name: "count", Type: TypeInteger, OptIn: true},
		},
		groups: []argGroup{{names: []string{"ref", "selector", "frame"}, exactlyOne: true}},
	})
	load := func(commands string) *Command {
		t.Helper()
		m, err := Parse("optin.toml", []byte("[tool]\nname = \"t\"\nmode = \"browser\"\n[browser]\n"+commands))
		if err != nil {
			t.Fatal(err)
		}
		return m.Command("optin_probe")
	}

	bare := load("[browser.commands.optin_probe]\n")
	for _, name := range []string{"frame", "count"} {
		if bare.Arg(name) != nil {
			t.Errorf("declared without args, the command offers the opt-in %s", name)
		}
	}
	if props := bare.InputSchema()["properties"].(map[string]any); len(props) != 2 {
		t.Errorf("declared without args, the schema's properties are %v; want ref and selector", props)
	}
	if len(bare.groups) != 1 || len(bare.groups[0].names) != 2 {
		t.Errorf("declared without args, the groups are %+v; want one over ref and selector", bare.groups)
	}
	if _, err := bare.Validate(map[string]any{"ref": "e1", "count": 2}); err == nil {
		t.Error("declared without args, the command takes an opt-in argument")
	}

	opted := load("[browser.commands.optin_probe]\nargs.ref = {}\nargs.count = { type = \"integer\" }\n")
	if opted.Arg("count") == nil || opted.Arg("frame") != nil || opted.Arg("selector") != nil {
		t.Errorf("declaring ref and count offers %v; want exactly them", opted.Args)
	}
	if _, err := opted.Validate(map[string]any{"ref": "e1", "count": 2}); err != nil {
		t.Errorf("the declared opt-in argument is refused: %v", err)
	}
}

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
	m := declareAll(t)
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

// declareAll loads a manifest of each engine declaring every built-in
// command of it without args, and returns the commands of both.
func declareAll(t *testing.T) *Manifest {
	t.Helper()
	var all *Manifest
	for _, engine := range []string{"cdp-direct", "http"} {
		doc := "[tool]\nname = \"all\"\nmode = \"browser\"\n[browser]\nengine = \"" + engine + "\"\n" +
			"[browser.files]\nupload_dir = \".\"\ndownload_dir = \".\"\nstate_dir = " + strconv.Quote(OwnerOnlyDir(t)) + "\n"
		if engine == "http" {
			doc += "[browser.search]\nbackend = \"duckduckgo\"\n"
		}
		for _, name := range BuiltinCommands() {
			if IsHTTPCommand(name) == (engine == "http") {
				doc += "[browser.commands." + name + "]\n"
			}
		}
		m, err := Parse("all.toml", []byte(doc))
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

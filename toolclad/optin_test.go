package toolclad

import (
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

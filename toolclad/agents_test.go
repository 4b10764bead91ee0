package toolclad

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseAgents(t *testing.T) {
	alice, bob := TokenHash("alice-token"), TokenHash("bob-token")
	as, err := ParseAgents("agents.toml", []byte(`
[agents.alice]
token_sha256 = "`+alice+`"
groups = ["research", "ops", "research"]

[agents."bob.ci"]
token_sha256 = "`+strings.ToUpper(bob)+`"
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := as.IDs(); !slices.Equal(got, []string{"alice", "bob.ci"}) {
		t.Errorf("ids = %v", got)
	}
	a := as.Lookup("alice-token")
	if a == nil || a.ID != "alice" || !slices.Equal(a.Groups, []string{"ops", "research"}) {
		t.Errorf("alice's token gives %+v", a)
	}
	if b := as.Lookup("bob-token"); b == nil || b.ID != "bob.ci" || len(b.Groups) != 0 {
		t.Errorf("bob's token gives %+v", b)
	}
	for _, tok := range []string{"", "alice-token\n", "Alice-token", alice} {
		if got := as.Lookup(tok); got != nil {
			t.Errorf("token %q is %s's", tok, got.ID)
		}
	}
	var none *Agents
	if none.Lookup("alice-token") != nil {
		t.Error("no agents file, yet a token is an agent's")
	}
}

func TestParseAgentsProblems(t *testing.T) {
	h := TokenHash("t")
	cases := []struct{ name, doc, want string }{
		{"syntax", "[agents.a\n", "agents.toml:1:"},
		{"empty", "", `agents: no [agents.<id>] table`},
		{"no token", "[agents.a]\ngroups = []\n", "agents.toml:1:9: agents.a: missing token_sha256"},
		{"short hash", "[agents.a]\ntoken_sha256 = \"abc\"\n", "agents.toml:2:1: agents.a.token_sha256: want the 64 hex digits of a SHA-256, got 3 characters"},
		{"not hex", "[agents.a]\ntoken_sha256 = \"" + strings.Repeat("z", 64) + "\"\n", "want the 64 hex digits"},
		{"hash type", "[agents.a]\ntoken_sha256 = 5\n", "agents.a.token_sha256: wrong type: expected a string"},
		{"same token", "[agents.a]\ntoken_sha256 = \"" + h + "\"\n[agents.b]\ntoken_sha256 = \"" + h + "\"\n", `agents.toml:4:1: agents.b.token_sha256: the same token as agent "a"`},
		{"bad id", "[agents.\"a b\"]\ntoken_sha256 = \"" + h + "\"\n", `agent id "a b"`},
		{"bad group", "[agents.a]\ntoken_sha256 = \"" + h + "\"\ngroups = [\"x y\"]\n", `group "x y"`},
		{"group type", "[agents.a]\ntoken_sha256 = \"" + h + "\"\ngroups = [1]\n", "agents.a.groups[0]: wrong type"},
		{"unknown key", "[agents.a]\ntoken_sha256 = \"" + h + "\"\ntoken = \"secret\"\n", "agents.a.token: unknown key"},
		{"unknown table", "[agents.a]\ntoken_sha256 = \"" + h + "\"\n[operators]\n", "operators: unknown key"},
		{"agent not a table", "agents.a = \"x\"\n", "agents.a: wrong type: expected a table"},
	}
	for _, c := range cases {
		_, err := ParseAgents("agents.toml", []byte(c.doc))
		var le *LoadError
		if !errors.As(err, &le) {
			t.Errorf("%s: err = %v, want a *LoadError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant it to say %q", c.name, err, c.want)
		}
	}
}

// FuzzParseAgents: any file either loads, with every agent found by its
// own token's hash and none by another's, or is refused with problems
// that each name the file; it never panics.
func FuzzParseAgents(f *testing.F) {
	h := TokenHash("t")
	f.Add("[agents.a]\ntoken_sha256 = \"" + h + "\"\ngroups = [\"g\"]\n")
	f.Add("[agents.a]\n[agents.b]\n")
	f.Add("agents = 3")
	f.Add("[agents.\"\"]\ntoken_sha256 = \"" + h + "\"\n")
	f.Fuzz(func(t *testing.T, doc string) {
		as, err := ParseAgents("fuzz.toml", []byte(doc))
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || len(le.Problems) == 0 {
				t.Fatalf("not a *LoadError with problems: %v", err)
			}
			for _, p := range le.Problems {
				if p.File != "fuzz.toml" || p.Line < 1 {
					t.Fatalf("problem without its place: %+v", p)
				}
			}
			return
		}
		if len(as.IDs()) == 0 {
			t.Fatal("a file without agents loaded")
		}
		for _, a := range as.list {
			if !agentIDPattern.MatchString(a.ID) {
				t.Fatalf("agent id %q loaded", a.ID)
			}
		}
	})
}

package cedar

import (
	"fmt"
	"sort"
	"strings"

	cedargo "github.com/cedar-policy/cedar-go"
)

// Tally is what a policy directory holds, counted the one way every
// command says it (`check`, `evidence show`, `evidence replay`): the Cedar
// policies, and the policy files (*.cedar) they are in. The schema is
// neither, so a directory of six .cedar files and a schema is "8 Cedar
// policies in 6 policy files", never 7 files.
type Tally struct {
	Policies int
	Files    int
}

// String says the tally in words, as the commands print it.
func (t Tally) String() string {
	return fmt.Sprintf("%s in %s", plural(t.Policies, "Cedar policy", "Cedar policies"), plural(t.Files, "policy file", "policy files"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Tally counts the engine's policies and the files they came from.
func (e *Engine) Tally() Tally {
	if e == nil {
		return Tally{}
	}
	files := 0
	for name := range e.sources {
		if strings.HasSuffix(name, ".cedar") {
			files++
		}
	}
	return Tally{Policies: len(e.infos), Files: files}
}

// TallySources counts the policies in a policy directory's files as
// recorded (Engine.Sources: file name to text, the schema among them),
// without loading them: an evidence reader says what a session ran under
// from its recorded configuration. A file that does not parse is an error
// naming it, not a guess.
func TallySources(sources map[string]string) (Tally, error) {
	names := make([]string, 0, len(sources))
	for name := range sources {
		if strings.HasSuffix(name, ".cedar") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	t := Tally{Files: len(names)}
	for _, name := range names {
		list, err := cedargo.NewPolicyListFromBytes(name, []byte(sources[name]))
		if err != nil {
			return Tally{}, newParseError(name, []byte(sources[name]), err)
		}
		t.Policies += len(list)
	}
	return t, nil
}

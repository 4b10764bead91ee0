package toolclad

// Offers reports whether a reply or a refusal may name a call of command
// with the given arguments: the manifest declares the command, and its
// signature takes every one of them. What the scope, the secrets' rules
// or Cedar then make of the call is for the call to find out; what Offers
// rules out is a hint whose call its arguments alone would refuse (an
// undeclared command, an argument the manifest's declaration left out).
// A nil manifest offers nothing.
func (m *Manifest) Offers(command string, args ...string) bool {
	if m == nil {
		return false
	}
	c := m.Command(command)
	if c == nil {
		return false
	}
	for _, a := range args {
		if c.Arg(a) == nil {
			return false
		}
	}
	return true
}

// GivesRefs reports whether the manifest's snapshots hand out element
// refs: snapshot is declared and renders the accessibility tree (an
// extract_mode of html or text has no refs).
func (m *Manifest) GivesRefs() bool {
	return m.Offers("snapshot") && m.Browser.ExtractMode == "accessibility_tree"
}

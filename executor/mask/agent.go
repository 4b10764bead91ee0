package mask

import (
	"slices"
	"strings"
	"sync"
	"unicode"
)

// AgentTexts is what the agent itself wrote in an MCP session (every
// string of every call's arguments, keys included, in every session of
// every tool it opened), as the pieces of secrets it holds: canonical
// (canonical), the longest from each character, none inside another. So
// it is bounded by the secrets' lengths (one piece per character of each
// form at most), however much the agent writes, and nothing is ever
// forgotten: a string the agent wrote comes back as written until the MCP
// session ends. (A secret a reload adds is looked for only in what the
// agent writes after it.) The zero AgentTexts holds nothing. Safe for
// concurrent use: the MCP session's calls to the tools of two manifests
// run side by side.
type AgentTexts struct {
	mu     sync.Mutex
	pieces []string // replaced, never changed in place: ForAgent keeps it
}

// Note adds to a the pieces of m's secrets that texts hold, in any
// spelling m reads, and as the accessibility tree collapses their white
// space. m is the masker of every secret the agent's texts may be compared
// with (the executor's of all manifests).
func (a *AgentTexts) Note(m *Masker, texts []string) {
	if m == nil || a == nil {
		return
	}
	var found []string
	for _, t := range texts {
		for _, x := range []string{t, plain(t)} {
			for _, r := range m.scan(x, true) {
				found = append(found, canonical(m.forms[r.form].chars[r.k:r.k+r.n]))
			}
		}
	}
	if len(found) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	pieces := slices.Clone(a.pieces)
	for _, p := range found {
		if slices.ContainsFunc(pieces, func(q string) bool { return strings.Contains(q, p) }) {
			continue
		}
		pieces = slices.DeleteFunc(pieces, func(q string) bool { return strings.Contains(p, q) })
		pieces = append(pieces, p)
	}
	a.pieces = pieces
}

// held returns the pieces noted so far.
func (a *AgentTexts) held() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pieces
}

// ForAgent is the masker for what is returned to the agent of a session:
// it leaves as they are the runs of secrets that the agent's own texts of
// the session hold (a), in whatever spelling or case they come back — a
// query the agent wrote comes back percent-encoded in the page's URL, in
// this call's reply and in every later one's state line, and a search page
// shows it in its text. What the agent wrote comes back as it wrote it;
// otherwise a reply would show, by what the masker hid of it, whether a
// guess was a piece of a secret (the masker as an oracle). The evidence
// and the logs are masked in full.
func (m *Masker) ForAgent(a *AgentTexts) *Masker {
	own := a.held()
	if m == nil || len(own) == 0 {
		return m
	}
	c := *m
	c.own = own
	return &c
}

// canonical is a run of a secret's characters as the agent's pieces are
// compared: white space collapsed, each letter case-folded (a character
// whose case mapping is longer, ß, as that text, ss), so that whichever
// spelling, case and spacing a text comes back in, its pieces compare
// equal to those the agent wrote.
func canonical(chars []rune) string {
	var b strings.Builder
	for _, w := range strings.Fields(string(chars)) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		for _, c := range w {
			if text, ok := multiFolds[c]; ok {
				for _, x := range text {
					b.WriteRune(foldRune(x))
				}
				continue
			}
			b.WriteRune(foldRune(c))
		}
	}
	return b.String()
}

// foldRune is the least character of c's simple case folding orbit.
func foldRune(c rune) rune {
	least := c
	for x := unicode.SimpleFold(c); x != c; x = unicode.SimpleFold(x) {
		least = min(least, x)
	}
	return least
}

// ArgTexts are the strings among a call's arguments, keys included: what
// the agent wrote in the call, for Note.
func ArgTexts(args map[string]any) []string {
	var out []string
	for k, v := range args {
		out = append(out, k)
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

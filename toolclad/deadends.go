package toolclad

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// Warnings returns the dead ends of a manifest that loads: commands and
// arguments it declares that can never work, each a Problem with Warning
// set, at the place in the file that declares it. They are not load
// errors, since the manifest is safe as written, but an agent given such a
// command is told to do something it cannot (a ref-only click under
// snapshots that hand out no refs is refused with "take a snapshot first",
// and the snapshot it takes has none), so `check` and `serve` say so.
//
// It looks for: a ref argument where no snapshot hands out refs; a command
// whose required arguments can never be given, or that needs one of
// several arguments none of which can be given, or that requires two
// arguments of which at most one may be given; an enum none of whose
// allowed values passes its own pattern; a pattern no ref, tab id or URL
// inside the scope can match; and search_web's backend outside the scope.
func (m *Manifest) Warnings() []Problem {
	w := &deadEnds{m: m, pos: indexPositions(m.Source)}
	for _, c := range m.Commands {
		w.command(c)
	}
	w.dialogs()
	w.searchBackend()
	sortProblems(w.out)
	return w.out
}

// deadEnds collects one manifest's warnings.
type deadEnds struct {
	m   *Manifest
	pos *positions
	out []Problem
}

func (w *deadEnds) warnf(path keyPath, format string, args ...any) {
	line, col := w.pos.of(path)
	w.out = append(w.out, Problem{
		File: w.m.Path, Line: line, Col: col, Key: path.String(), Message: fmt.Sprintf(format, args...), Warning: true,
	})
}

func commandPath(c *Command) keyPath { return keyPath{"browser", "commands", c.Name} }

// argPath is where an argument is declared, or its command when the
// manifest does not declare it.
func (w *deadEnds) argPath(c *Command, a *Arg) keyPath {
	p := commandPath(c).child("args").child(a.Name)
	if _, ok := w.pos.at[p.mapKey()]; ok {
		return p
	}
	return commandPath(c)
}

// command warns of the arguments of c that can never be given, and of c
// itself when no call of it can pass its signature.
func (w *deadEnds) command(c *Command) {
	dead := map[string]string{} // argument name → why it can never be given
	for _, a := range c.Args {
		if why := w.deadArg(c, a); why != "" {
			dead[a.Name] = why
		}
	}
	unusable := false
	for _, a := range c.Args {
		if why, ok := dead[a.Name]; ok && a.Required {
			w.warnf(w.argPath(c, a), "%s can never run: its required argument %s can never be given: %s", c.Name, a.Name, why)
			unusable = true
		}
	}
	for _, g := range c.groups {
		var required, usable []string
		for _, n := range g.names {
			if a := c.Arg(n); a != nil && a.Required {
				required = append(required, n)
			}
			if _, isDead := dead[n]; !isDead {
				usable = append(usable, n)
			}
		}
		switch {
		case len(required) > 1:
			w.warnf(commandPath(c).child("args"), "%s can never run: %s are all required, but %s of %s may be given",
				c.Name, strings.Join(required, " and "), map[bool]string{true: "exactly one", false: "at most one"}[g.exactlyOne], strings.Join(g.names, ", "))
			unusable = true
		case g.exactlyOne && len(usable) == 0:
			var whys []string
			for _, n := range g.names {
				whys = append(whys, n+": "+dead[n])
			}
			w.warnf(commandPath(c).child("args"), "%s can never run: it needs one of %s, and none can be given (%s)",
				c.Name, strings.Join(g.names, ", "), strings.Join(whys, "; "))
			unusable = true
		}
	}
	if unusable {
		return
	}
	// An optional argument that can never be given is the manifest's
	// mistake only where it declares it; one it left to the built-in
	// signature (submit_form's ref without a snapshot) costs nothing.
	for _, a := range c.Args {
		if why, ok := dead[a.Name]; ok && !a.Required && len(w.argPath(c, a)) > len(commandPath(c)) {
			w.warnf(w.argPath(c, a), "%s's argument %s can never be given: %s", c.Name, a.Name, why)
		}
	}
}

// deadArg says why no value of a can ever pass, or "".
func (w *deadEnds) deadArg(c *Command, a *Arg) string {
	if a.Type == TypeRef {
		if why := w.noRefs(); why != "" {
			return why
		}
	}
	if a.Type == TypeEnum {
		var why []string
		for _, v := range a.Allowed {
			if _, err := a.check(v); err != nil {
				why = append(why, fmt.Sprintf("%q %s", v, err.Message))
			}
		}
		if len(why) == len(a.Allowed) && len(why) > 0 {
			return "none of its allowed values passes its own checks (" + strings.Join(why, "; ") + ")"
		}
	}
	if a.Type == TypeURL && a.ScopeCheck {
		if sc := w.m.Browser.Scope; len(sc.AllowedDomains) == 0 && !sc.AllowExternal {
			return "the scope allows no host ([browser.scope] has no allowed_domains and allow_external is false), so every URL is refused"
		}
	}
	var base *Arg
	if c.builtin != nil {
		base = c.builtin.arg(a.Name)
	}
	if a.Pattern == nil || base == nil || a.Pattern == base.Pattern {
		return "" // only a pattern the manifest declares can exclude what the command needs
	}
	if n, ok := shortestMatch(a.Pattern); !ok {
		return fmt.Sprintf("its pattern %s matches nothing at all", a.Pattern)
	} else if a.MaxLen > 0 && n > a.MaxLen {
		return fmt.Sprintf("its pattern %s matches only values of at least %d characters, and max_len is %d", a.Pattern, n, a.MaxLen)
	}
	switch {
	case a.Type == TypeRef:
		if !matchesAnyNumbered(a, "e") {
			return fmt.Sprintf("its pattern %s matches none of the refs snapshots hand out (e1, e2, …)", a.Pattern)
		}
	case base.Pattern == tabPattern:
		if !matchesAnyNumbered(a, "t") {
			return fmt.Sprintf("its pattern %s matches none of the tab ids list_tabs hands out (t1, t2, …)", a.Pattern)
		}
	case a.Type == TypeURL:
		return w.deadURLPattern(a)
	}
	return ""
}

// noRefs says why this manifest's agent can never hold an element ref, or
// "" when its snapshots hand them out. Only snapshot, in extract_mode
// "accessibility_tree", hands out refs.
func (w *deadEnds) noRefs() string {
	switch mode := w.m.Browser.ExtractMode; {
	case w.m.Command("snapshot") == nil:
		return "no snapshot is declared, and only snapshot hands out refs; declare [browser.commands.snapshot], or accept a selector"
	case mode != "accessibility_tree":
		return fmt.Sprintf("this manifest's snapshots carry no refs: extract_mode = %q makes snapshot return the page's %s, "+
			"and only \"accessibility_tree\" (the default) hands out refs, so the refusal's \"take a snapshot first\" leads nowhere; "+
			"remove extract_mode (read gives the page as Markdown), or accept a selector", mode, map[string]string{"text": "visible text", "html": "HTML"}[mode])
	}
	return ""
}

// matchesAnyNumbered reports whether a value of the form prefix+N (the
// refs e1, e2, … or the tab ids t1, t2, …, N of one to six digits) passes
// a. Every N up to 9999 is tried, and a few longer ones: ids are handed
// out from 1 up, so a pattern that matches none of these matches none a
// session is likely to see.
func matchesAnyNumbered(a *Arg, prefix string) bool {
	for n := 0; n < 10000; n++ {
		if _, err := a.check(prefix + strconv.Itoa(n)); err == nil {
			return true
		}
	}
	for _, n := range []int{12345, 99999, 100000, 123456, 999999} {
		if _, err := a.check(prefix + strconv.Itoa(n)); err == nil {
			return true
		}
	}
	return false
}

// deadURLPattern says why a URL argument's pattern can match no URL the
// argument accepts, or "": a pattern anchored at the start whose literal
// beginning names a scheme the argument refuses, or a whole host the scope
// refuses. Anything it cannot read that way is given the benefit of the
// doubt.
func (w *deadEnds) deadURLPattern(a *Arg) string {
	re, err := syntax.Parse(a.Pattern.String(), syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) == 0 || re.Sub[0].Op != syntax.OpBeginText {
		return ""
	}
	prefix, complete := a.Pattern.LiteralPrefix()
	scheme, rest, found := strings.Cut(prefix, "://")
	if !found {
		return ""
	}
	if len(a.Schemes) > 0 && !slices.Contains(a.Schemes, strings.ToLower(scheme)) {
		return fmt.Sprintf("its pattern %s matches only %s URLs, and its schemes are %s", a.Pattern, scheme, strings.Join(a.Schemes, ", "))
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 && !complete {
		return "" // the host may go on
	}
	host := rest
	if end >= 0 {
		host = rest[:end]
	}
	if host == "" || strings.Contains(host, "@") || !a.ScopeCheck {
		return ""
	}
	if v := w.m.Scope().Check(scheme + "://" + host + "/"); !v.Allowed {
		return fmt.Sprintf("its pattern %s matches only URLs on %s, which the scope refuses (%s)", a.Pattern, host, v.Reason)
	}
	return ""
}

// dialogs warns of handle_dialog declared where no dialog is ever left
// for it: under dialogs = "dismiss" or "accept" each dialog is answered at
// once.
func (w *deadEnds) dialogs() {
	c := w.m.Command("handle_dialog")
	if c == nil || w.m.Browser.Dialogs == DialogsAsk {
		return
	}
	at := keyPath{"browser", "dialogs"}
	if _, ok := w.pos.at[at.mapKey()]; !ok {
		at = commandPath(c)
	}
	w.warnf(at, "handle_dialog can never run: dialogs = %q answers every dialog at once, so none is ever left for it; "+
		"set dialogs = \"ask\" (or leave dialogs out) to let the agent answer dialogs, or remove handle_dialog", w.m.Browser.Dialogs)
}

// shortestMatch is the length, in characters, of the shortest text re
// can match, and false when it can match none. A value shorter than that
// cannot hold a match anywhere in it.
func shortestMatch(re *regexp.Regexp) (int, bool) {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return 0, true
	}
	n := minLen(parsed.Simplify())
	return n, n < noMatch
}

// noMatch stands for "no text at all" in minLen's sums.
const noMatch = 1 << 30

func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpNoMatch:
		return noMatch
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return noMatch // an empty class: [^\x00-\x{10FFFF}]
		}
		return 1
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		return 0
	case syntax.OpRepeat:
		if re.Min == 0 {
			return 0
		}
		return min(noMatch, re.Min*minLen(re.Sub[0]))
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n = min(noMatch, n+minLen(sub))
		}
		return n
	case syntax.OpAlternate:
		n := noMatch
		for _, sub := range re.Sub {
			n = min(n, minLen(sub))
		}
		return n
	}
	return 0 // empty-width assertions and the empty string
}

// searchBackend warns when search_web's backend is outside the scope:
// the search request is judged like any other, so every search would be
// refused.
func (w *deadEnds) searchBackend() {
	b := w.m.Browser
	if b.Engine != EngineHTTP || w.m.Command("search_web") == nil || b.Search.URL == "" {
		return
	}
	v := w.m.Scope().Check(b.Search.URL)
	if v.Allowed {
		return
	}
	at := keyPath{"browser", "search", "url"}
	if _, ok := w.pos.at[at.mapKey()]; !ok {
		at = keyPath{"browser", "search", "backend"}
	}
	host := v.Host
	if host == "" {
		host = b.Search.URL
	}
	w.warnf(at, "search_web's backend %s is outside the scope (%s), so every search_web call is refused; add %q to [browser.scope] allowed_domains",
		b.Search.URL, v.Reason, host)
}

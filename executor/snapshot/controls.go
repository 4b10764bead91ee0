package snapshot

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// leafControls are shown by their name: their own text is the name.
var leafControls = map[string]bool{"link": true, "button": true, "textbox": true, "searchbox": true, "checkbox": true,
	"radio": true, "combobox": true, "menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "tab": true,
	"switch": true, "slider": true, "spinbutton": true, "option": true}

// containerControls are shown with a ref, then their content.
var containerControls = map[string]bool{"listbox": true, "treeitem": true}

// controlFlags are the states a control's line shows.
var controlFlags = []string{"checked", "selected", "disabled", "required", "expanded", "focused"}

// control renders an element the agent can act on, and reports whether
// it was one.
func (r *renderer) control(v *docView, i int, tag, role string, ax *AXNode) bool {
	if ax == nil || (!leafControls[role] && !containerControls[role]) {
		return false
	}
	if role == "option" && tag == "option" {
		return false // a <select>'s options are listed on its line
	}
	var b strings.Builder
	if role == "link" {
		// The link's own text, in place, then its ref and target.
		before := r.inline.String()
		r.inline.Reset()
		r.gather++
		r.children(v, i)
		label := r.take()
		r.gather--
		r.inline.WriteString(before)
		if label == "" {
			label = ax.Name
		}
		b.WriteString("[" + label + "](" + r.ref(v, i))
		if u := shortURL(ax.Props["url"], r.origin, r.page); u != "" && u != label && strings.TrimPrefix(u, "mailto:") != label {
			b.WriteString(" " + u) // a link whose text is its target says it once
		}
		b.WriteString(")")
		r.text(b.String(), true) // in the flow of the text around it, as displayed
		return true
	}
	b.WriteString("[" + role)
	if ax.Name != "" && !r.labelled(v, i, ax.Name) {
		b.WriteString(" " + strconv.Quote(clip(ax.Name, MaxNameLen)))
	}
	b.WriteString(" " + r.ref(v, i))
	for _, flag := range controlFlags {
		if v := ax.Props[flag]; v == "true" || v == "mixed" {
			b.WriteString(" " + flag)
		}
	}
	if ax.Value != "" {
		value := ax.Value
		if r.isPassword(v, i, tag) {
			// Chromium gives a password field's value as one dot a
			// character: its length, which is a secret's too.
			value = PasswordMask
		}
		b.WriteString(" value=" + strconv.Quote(clip(value, maxTextLen)))
	}
	if tag == "select" {
		if opts := r.options(v, i, role != "combobox"); opts != "" {
			b.WriteString(" options: " + opts)
		}
	}
	b.WriteString("]")
	r.text(" "+b.String()+" ", false)
	if containerControls[role] && tag != "select" {
		// A select's options are on its line (a customizable one lays
		// them out, and they would show twice).
		r.children(v, i)
	}
	return true
}

// labelled reports whether the control's name is text shown beside it
// (its label), so that the snapshot need not say it twice: the text just
// before it in its block or on the line before, or the text of a label
// around it.
func (r *renderer) labelled(v *docView, i int, name string) bool {
	name = collapse(name)
	if strings.HasSuffix(strings.TrimSpace(r.inline.String()), name) {
		return true
	}
	lines := *r.lines()
	if r.inline.Len() == 0 && len(lines) > 0 && lines[len(lines)-1].text == name {
		return true
	}
	for p, up := int(v.d.Nodes.ParentIndex[i]), 0; p >= 0 && up < 3; p, up = int(v.d.Nodes.ParentIndex[p]), up+1 {
		if strings.EqualFold(r.str(v.d.Nodes.NodeName[p]), "label") {
			return strings.Contains(collapse(r.textOf(v, p)), name)
		}
	}
	return false
}

// options lists a <select>'s options by their labels (optionLabel),
// wherever they are in it (a customizable select may hold them in other
// elements) but for a select or datalist a script put in it, whose
// options are not the select's, and but for those hidden by a hidden
// attribute, theirs or an element's around them (an option hidden by
// its style cannot be told: a select's options have no layout); marked
// says which are selected (a list box, whose line has no value).
func (r *renderer) options(v *docView, i int, marked bool) string {
	var names []string
	var visit func(int)
	visit = func(n int) {
		for _, c := range v.children[n] {
			if v.d.Nodes.NodeType[c] != 1 {
				continue
			}
			if _, hidden := r.attr(v, c, "hidden"); hidden {
				continue
			}
			switch strings.ToLower(r.str(v.d.Nodes.NodeName[c])) {
			case "option":
				name := strconv.Quote(collapse(r.optionLabel(v, c)))
				if marked && v.rare.selected[c] {
					name += " (selected)"
				}
				names = append(names, name)
			case "select", "datalist":
			default:
				visit(c)
			}
		}
	}
	visit(i)
	return strings.Join(names, ", ")
}

// optionLabel is an option's label: its label attribute, or else its
// text.
func (r *renderer) optionLabel(v *docView, i int) string {
	if label, _ := r.attr(v, i, "label"); label != "" {
		return label
	}
	return r.textOf(v, i)
}

// inList reports whether node i is inside a select or a datalist.
func (r *renderer) inList(v *docView, i int) bool {
	for p := int(v.d.Nodes.ParentIndex[i]); p >= 0; p = int(v.d.Nodes.ParentIndex[p]) {
		if t := strings.ToLower(r.str(v.d.Nodes.NodeName[p])); t == "select" || t == "datalist" {
			return true
		}
	}
	return false
}

// textOf is the text of the DOM nodes under node n.
func (r *renderer) textOf(v *docView, n int) string {
	if v.d.Nodes.NodeType[n] == 3 {
		return r.str(v.d.Nodes.NodeValue[n])
	}
	var b strings.Builder
	for _, c := range v.children[n] {
		b.WriteString(r.textOf(v, c))
	}
	return b.String()
}

// shortURL is a link's target as short as it reads unambiguously: a
// fragment of the page itself as "#x", a URL of the page's own origin as
// its path.
func shortURL(u, origin, page string) string {
	if page != "" && strings.HasPrefix(u, page+"#") {
		return u[len(page):]
	}
	if origin != "" && strings.HasPrefix(u, origin+"/") {
		return u[len(origin):]
	}
	return u
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes, at a rune boundary, marked with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// PasswordMask is what a snapshot shows as the value of a password field
// that holds one, whatever its length: the browser's one dot a character
// would tell the length of the password (or of the secret typed there).
const PasswordMask = "••••••••"

// isPassword reports whether node i, a control of tag tag, is a password
// field (an input of type password, in any case).
func (r *renderer) isPassword(v *docView, i int, tag string) bool {
	if tag != "input" {
		return false
	}
	typ, _ := r.attr(v, i, "type")
	return strings.EqualFold(strings.TrimSpace(typ), "password")
}

package executor

import (
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/target"
)

// The snapshot is the page as an agent reads it: its text, one line per
// block (a paragraph with its links and inline code is one line), in a
// Markdown-like form — "## Heading", "- list item", "| table | row |",
// fenced code blocks — with every element the agent can act on marked by
// a ref:
//
//	[link text](e4 /docs/next)           a link, with its target
//	[button "Save" e5]                   a control, with its state
//	[textbox "Email" e6 value="a@b.c"]
//
// It is rendered from two reads the page cannot forge: the layout
// (DOMSnapshot: what is displayed, block or inline, preformatted or not)
// and the accessibility tree (each control's role, name, value and
// state). Text that is not displayed is left out; nothing displayed is.
// The page's main landmark comes first, then the rest in document order.

// snapStyles are the computed styles the renderer reads, in this order,
// and the one plainLinks reads (links.go: styleInteractivity).
var snapStyles = []string{"display", "visibility", "white-space", "interactivity"}

// axInfo is what the accessibility tree says of one element.
type axInfo struct {
	role, name, value string
	props             map[string]string
}

// renderer turns one DOMSnapshot into snapshot text.
type renderer struct {
	snap *domsnapshot.CaptureSnapshotResult
	top  *docView // the tab's own document
	// cur is the capture of the process being rendered: the tab's, or an
	// out-of-process frame's (oopif), whose top document is curTop.
	cur      *frameCapture
	curTop   *docView
	hosts    []frameHost // the iframe elements that lead to cur
	ax       map[cdp.BackendNodeID]*axInfo
	origin   string // the page's origin, and its URL without a fragment
	page     string
	refs     map[string]refTarget
	next     int
	main     []string // lines of the main landmark
	rest     []string // every other line
	inMain   int
	inline   strings.Builder // the block being filled
	lists    []int           // the open lists: 0 unordered, else the next number
	tableRow []string        // the cells of the table row being filled
	// gather > 0: the text goes into one inline piece (a table cell, a
	// link's text): blocks inside it do not start lines of their own.
	gather int
	// prefix is put before the next line: a heading's #s, a list item's
	// bullet (the item's text may come after blocks of its own).
	prefix string
	inPre  int // inside a <pre>: code is not marked inline
}

// docView is one document of the snapshot, with its tree and layout
// indexed.
type docView struct {
	d        *domsnapshot.DocumentSnapshot
	children [][]int
	layout   map[int]int // node index -> layout index
	rare     rareIndex
}

// rareIndex holds the snapshot's sparse per-node data by node index.
type rareIndex struct {
	contentDoc map[int]int
	pseudo     map[int]bool
	selected   map[int]bool // options selected
}

func newDocView(d *domsnapshot.DocumentSnapshot) *docView {
	n := len(d.Nodes.ParentIndex)
	v := &docView{d: d, children: make([][]int, n), layout: make(map[int]int, len(d.Layout.NodeIndex))}
	for i, p := range d.Nodes.ParentIndex {
		if p >= 0 && int(p) < n {
			v.children[p] = append(v.children[p], i)
		}
	}
	for li, ni := range d.Layout.NodeIndex {
		v.layout[int(ni)] = li
	}
	v.rare.contentDoc = map[int]int{}
	if c := d.Nodes.ContentDocumentIndex; c != nil {
		for i, idx := range c.Index {
			v.rare.contentDoc[int(idx)] = int(c.Value[i])
		}
	}
	v.rare.pseudo = map[int]bool{}
	if p := d.Nodes.PseudoType; p != nil {
		for _, idx := range p.Index {
			v.rare.pseudo[int(idx)] = true
		}
	}
	v.rare.selected = map[int]bool{}
	if o := d.Nodes.OptionSelected; o != nil {
		for _, idx := range o.Index {
			v.rare.selected[int(idx)] = true
		}
	}
	return v
}

func (r *renderer) str(i domsnapshot.StringIndex) string { return strIndex(r.snap.Strings, i) }

// style is computed style k (an index of snapStyles) of the node with
// layout index li.
func (r *renderer) style(v *docView, li, k int) string { return docNodes{r.snap, v.d}.style(li, k) }

func (r *renderer) attr(v *docView, i int, name string) (string, bool) {
	return docNodes{r.snap, v.d}.attr(i, name)
}

// skippedTags never show text of their own.
var skippedTags = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "head": true, "title": true, "meta": true, "link": true}

// landmarkRoles open a section of their own, named on a line.
var landmarkRoles = map[string]bool{"navigation": true, "complementary": true, "banner": true, "contentinfo": true,
	"form": true, "search": true, "region": true, "dialog": true, "alertdialog": true}

// render renders node i of v and everything under it.
func (r *renderer) render(v *docView, i int) {
	nodes := v.d.Nodes
	switch nodes.NodeType[i] {
	case 3: // text
		li, shown := v.layout[i]
		if !shown || r.hidden(v, li) {
			return
		}
		text := r.str(nodes.NodeValue[i])
		if t := v.d.Layout.Text[li]; t >= 0 {
			text = r.str(t)
		}
		r.text(text, strings.HasPrefix(r.parentWhiteSpace(v, i), "pre"))
		return
	case 1:
	case 9, 11: // a document or a shadow root
		r.children(v, i)
		return
	default:
		return
	}
	if v.rare.pseudo[i] {
		return // ::before and ::after content is decoration
	}
	tag := strings.ToLower(r.str(nodes.NodeName[i]))
	if skippedTags[tag] {
		return
	}
	li, shown := v.layout[i]
	display := ""
	if shown {
		display = r.style(v, li, 0)
	}
	if shown && display == "none" {
		return
	}
	ax := r.ax[nodes.BackendNodeID[i]]
	role := ""
	if ax != nil {
		role = ax.role
	}
	if tag == "iframe" || tag == "frame" {
		if doc, ok := v.rare.contentDoc[i]; ok {
			r.frame(v, i, doc)
		} else if fc := r.oopifAt(nodes.BackendNodeID[i]); fc != nil && shown {
			r.oopif(fc, frameHost{oopif: r.cur.target, node: nodes.BackendNodeID[i], nested: v != r.curTop})
		} else if src, _ := r.attr(v, i, "src"); shown && src != "" {
			// A document in another process (another site) is not in
			// this tab's layout.
			r.flush()
			r.line("[frame " + strconv.Quote(src) + ": another site's document, in its own process; its content is not shown]")
		}
		return
	}
	if r.control(v, i, tag, role, ax) {
		return
	}
	block := shown && isBlock(display)
	switch {
	case tag == "option" && shown && !r.inList(v, i):
		// An option outside a select or a datalist shows its label, which
		// Chromium paints itself: its text has no layout of its own.
		if !r.hidden(v, li) {
			r.flush()
			r.line(collapse(r.optionLabel(v, i)))
		}
	case tag == "main" || role == "main":
		r.flush()
		r.inMain++
		r.children(v, i)
		r.flush()
		r.inMain--
	case heading(tag, role) > 0:
		r.flush()
		r.prefixed(strings.Repeat("#", heading(tag, role))+" ", v, i)
	case tag == "ul" || tag == "ol" || tag == "menu" || role == "list":
		r.flush()
		n := 0
		if tag == "ol" {
			n = 1
		}
		r.lists = append(r.lists, n)
		r.children(v, i)
		r.flush()
		r.lists = r.lists[:len(r.lists)-1]
	case tag == "li" || role == "listitem":
		r.flush()
		r.prefixed(r.bullet(), v, i)
	case dataTable(tag, role):
		// A table Chromium takes for layout (LayoutTable: no headers,
		// blocks in its cells) is rendered as the blocks it lays out.
		r.flush()
		r.children(v, i)
		r.flush()
	case (tag == "tr" && role != "LayoutTableRow" || role == "row") && r.holdsTable(v, i):
		// A row with a table in a cell (tables side by side) cannot be
		// one line: its cells are rendered as blocks, each inner table
		// as a table of its own.
		r.flush()
		outer := r.tableRow
		r.tableRow = nil
		r.children(v, i)
		r.flush()
		r.tableRow = outer
	case tag == "tr" && role != "LayoutTableRow" || role == "row":
		r.flush()
		outer := r.tableRow
		r.tableRow = []string{}
		r.children(v, i)
		if r.inline.Len() > 0 { // text of the row outside its cells
			r.tableRow = append(r.tableRow, r.take())
		}
		row := r.tableRow
		r.tableRow = outer
		if len(row) > 0 {
			r.line("| " + strings.Join(row, " | ") + " |")
		}
	case (tag == "td" || tag == "th") && role != "LayoutTableCell" || role == "cell" || role == "columnheader" || role == "rowheader" || role == "gridcell":
		if r.tableRow == nil && r.gather == 0 && r.holdsTable(v, i) {
			r.flush()
			r.children(v, i)
			r.flush()
			return
		}
		r.flush()
		r.gather++
		r.children(v, i)
		r.gather--
		cell := r.take()
		if r.tableRow != nil {
			r.tableRow = append(r.tableRow, cell)
		} else if cell != "" {
			r.line(cell)
		}
	case tag == "pre":
		r.flush()
		r.inPre++
		r.children(v, i)
		r.inPre--
		code := strings.Trim(r.inline.String(), "\n")
		r.inline.Reset()
		if code != "" {
			r.line("```\n" + code + "\n```")
		}
	case tag == "code" && !block && r.inPre == 0:
		r.text("`", true)
		r.children(v, i)
		r.text("`", true)
	case tag == "img" || role == "img" || role == "image":
		if ax != nil && ax.name != "" {
			r.text("!["+ax.name+"]", true)
		}
	case tag == "br":
		r.flush()
	case landmarkRoles[role] && tag != "form" || tag == "form" && ax != nil && ax.name != "":
		r.flush()
		head := role
		if ax != nil && ax.name != "" {
			head += " " + strconv.Quote(clip(ax.name, maxNameLen))
		}
		r.line(head + ":")
		r.children(v, i)
		r.flush()
	default:
		if block {
			r.flush()
		}
		r.children(v, i)
		if block {
			r.flush()
		}
	}
}

// dataTable: an element of tag and accessibility role is a table of
// data, rendered as rows (not one Chromium takes for layout).
func dataTable(tag, role string) bool {
	return tag == "table" && role != "LayoutTable" || role == "table" || role == "grid"
}

// holdsTable reports whether a table of data that is laid out is inside
// node i of v.
func (r *renderer) holdsTable(v *docView, i int) bool {
	for _, c := range v.children[i] {
		if v.d.Nodes.NodeType[c] != 1 {
			continue
		}
		tag := strings.ToLower(r.str(v.d.Nodes.NodeName[c]))
		role := ""
		if ax := r.ax[v.d.Nodes.BackendNodeID[c]]; ax != nil {
			role = ax.role
		}
		if _, shown := v.layout[c]; shown && dataTable(tag, role) || r.holdsTable(v, c) {
			return true
		}
	}
	return false
}

func (r *renderer) children(v *docView, i int) {
	for _, c := range v.children[i] {
		r.render(v, c)
	}
}

// hidden: the layout object is not painted (visibility hidden or collapse).
func (r *renderer) hidden(v *docView, li int) bool {
	vis := r.style(v, li, 1)
	return vis == "hidden" || vis == "collapse"
}

// parentWhiteSpace is the white-space style of the element a text node is in.
func (r *renderer) parentWhiteSpace(v *docView, i int) string {
	p := int(v.d.Nodes.ParentIndex[i])
	if li, ok := v.layout[p]; ok {
		return r.style(v, li, 2)
	}
	return ""
}

func isBlock(display string) bool {
	switch {
	case display == "", display == "contents", strings.HasPrefix(display, "inline"):
		return false
	}
	return true
}

// heading is a heading's level (0: not a heading).
func heading(tag, role string) int {
	if len(tag) == 2 && tag[0] == 'h' && tag[1] >= '1' && tag[1] <= '6' {
		return int(tag[1] - '0')
	}
	if role == "heading" {
		return 2
	}
	return 0
}

// bullet is the prefix of a list item in the innermost open list.
func (r *renderer) bullet() string {
	depth := len(r.lists)
	if depth == 0 {
		return "- "
	}
	indent := strings.Repeat("  ", depth-1)
	if n := r.lists[depth-1]; n > 0 {
		r.lists[depth-1]++
		return indent + strconv.Itoa(n) + ". "
	}
	return indent + "- "
}

// text adds text to the block being filled; outside a preformatted
// element its white space collapses as the browser displays it.
func (r *renderer) text(s string, pre bool) {
	if !pre {
		s = collapseSpace(s)
		if s == "" {
			return
		}
		cur := r.inline.String()
		if s == " " && (cur == "" || strings.HasSuffix(cur, " ")) {
			return
		}
		if strings.HasPrefix(s, " ") && strings.HasSuffix(cur, " ") {
			s = s[1:]
		}
	}
	r.inline.WriteString(s)
}

// collapseSpace turns each run of white space into one space, keeping a
// leading or trailing one (it separates the text from its neighbours).
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(c)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

// take returns the block being filled, trimmed, and empties it.
func (r *renderer) take() string {
	s := strings.TrimSpace(r.inline.String())
	r.inline.Reset()
	return s
}

// flush ends the block being filled: it becomes a line, unless the text
// is being gathered into one piece (a cell, a link), where a block only
// leaves a space.
func (r *renderer) flush() {
	if r.gather > 0 {
		if r.inline.Len() > 0 && !strings.HasSuffix(r.inline.String(), " ") {
			r.inline.WriteByte(' ')
		}
		return
	}
	if s := r.take(); s != "" {
		r.line(s)
	}
}

// prefixed renders node i as blocks whose first line starts with prefix.
func (r *renderer) prefixed(prefix string, v *docView, i int) {
	if r.gather > 0 {
		r.children(v, i)
		return
	}
	r.prefix = prefix
	r.children(v, i)
	r.flush()
	r.prefix = ""
}

func (r *renderer) line(s string) {
	if r.gather > 0 {
		r.text(" "+s+" ", false)
		return
	}
	s, r.prefix = r.prefix+s, ""
	if r.inMain > 0 {
		r.main = append(r.main, s)
	} else {
		r.rest = append(r.rest, s)
	}
}

// output is the rendered page: the main landmark's lines first.
func (r *renderer) output() string {
	r.flush()
	if len(r.main) == 0 || len(r.rest) == 0 {
		return strings.Join(append(r.main, r.rest...), "\n")
	}
	return strings.Join(r.main, "\n") + "\n\n(outside the main content:)\n" + strings.Join(r.rest, "\n")
}

// refTarget is the element a ref names: its node, the out-of-process
// frame whose process it is in ("" for the tab's), and the same-process
// frame whose document it is in ("" for that process's top document).
type refTarget struct {
	node  cdp.BackendNodeID
	frame cdp.FrameID
	oopif target.ID
	// loader is the out-of-process frame's document as the snapshot read
	// it: a frame that has loaded another since (perhaps in another
	// process, whose node ids start again) makes the ref stale.
	loader cdp.LoaderID
	hosts  []frameHost // the iframe elements that lead to oopif
}

// ref gives node i of v a ref.
func (r *renderer) ref(v *docView, i int) string {
	r.next++
	ref := "e" + strconv.Itoa(r.next)
	t := refTarget{node: v.d.Nodes.BackendNodeID[i], hosts: r.hosts}
	if r.cur != nil {
		t.oopif, t.loader = r.cur.target, r.cur.loader
	}
	if v != r.curTop {
		t.frame = cdp.FrameID(r.str(v.d.FrameID))
	}
	r.refs[ref] = t
	return ref
}

// frame renders an embedded document in place, marked; its controls get
// refs like the tab's own (a ref knows its frame).
func (r *renderer) frame(v *docView, i, doc int) {
	r.flush()
	if doc < 0 || doc >= len(r.snap.Documents) {
		return
	}
	r.frameDoc(r.snap.Documents[doc], false)
}

// frameDoc renders a frame's document between its marks; top: it is the
// top document of an out-of-process frame's capture.
func (r *renderer) frameDoc(d *domsnapshot.DocumentSnapshot, top bool) {
	if u := r.str(d.DocumentURL); strings.HasPrefix(u, "chrome-error:") {
		r.line("[frame: not loaded]") // refused, or failed: the browser's error page
		return
	}
	fv := newDocView(d)
	if top {
		r.curTop = fv
	}
	r.line("[frame " + strconv.Quote(r.str(d.DocumentURL)) + ":]")
	lines := r.lines()
	n := len(*lines)
	for n, p := range d.Nodes.ParentIndex {
		if p < 0 {
			r.render(fv, n)
		}
	}
	r.flush()
	if len(*lines) == n && r.gather == 0 {
		*lines = (*lines)[:n-1] // an empty frame (about:blank, an ad slot) says nothing
		return
	}
	r.line("[end frame]")
}

// oopifAt is the out-of-process frame an iframe element of the current
// process shows (nil: none read).
func (r *renderer) oopifAt(node cdp.BackendNodeID) *frameCapture {
	if r.cur == nil {
		return nil
	}
	return r.cur.oopifs[node]
}

// oopif renders the document of an out-of-process frame in place, from
// its own capture (its strings, nodes and accessibility tree are its
// process's); its controls get refs that name the frame.
func (r *renderer) oopif(fc *frameCapture, host frameHost) {
	r.flush()
	if fc.snap == nil || len(fc.snap.Documents) == 0 {
		r.line("[frame " + strconv.Quote(fc.url) + ": its content could not be read]")
		return
	}
	snap, ax, cur, curTop, hosts := r.snap, r.ax, r.cur, r.curTop, r.hosts
	defer func() { r.snap, r.ax, r.cur, r.curTop, r.hosts = snap, ax, cur, curTop, hosts }()
	r.snap, r.ax, r.cur = fc.snap, fc.ax, fc
	r.hosts = append(slices.Clip(hosts), host)
	r.frameDoc(fc.snap.Documents[0], true)
}

// lines are the lines being written: the main landmark's or the rest.
func (r *renderer) lines() *[]string {
	if r.inMain > 0 {
		return &r.main
	}
	return &r.rest
}

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
func (r *renderer) control(v *docView, i int, tag, role string, ax *axInfo) bool {
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
			label = ax.name
		}
		b.WriteString("[" + label + "](" + r.ref(v, i))
		if u := shortURL(ax.props["url"], r.origin, r.page); u != "" && u != label && strings.TrimPrefix(u, "mailto:") != label {
			b.WriteString(" " + u) // a link whose text is its target says it once
		}
		b.WriteString(")")
		r.text(b.String(), true) // in the flow of the text around it, as displayed
		return true
	}
	b.WriteString("[" + role)
	if ax.name != "" && !r.labelled(v, i, ax.name) {
		b.WriteString(" " + strconv.Quote(clip(ax.name, maxNameLen)))
	}
	b.WriteString(" " + r.ref(v, i))
	for _, flag := range controlFlags {
		if v := ax.props[flag]; v == "true" || v == "mixed" {
			b.WriteString(" " + flag)
		}
	}
	if ax.value != "" {
		b.WriteString(" value=" + strconv.Quote(clip(ax.value, maxTextLen)))
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
	if r.inline.Len() == 0 && len(lines) > 0 && lines[len(lines)-1] == name {
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

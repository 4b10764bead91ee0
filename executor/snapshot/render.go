package snapshot

import (
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// Limits of what a line shows of the page's own strings.
const (
	// MaxNameLen is the longest a control's name is shown; a longer one
	// is cut and ends in "…".
	MaxNameLen = 120
	// maxTextLen is the longest a control's value is shown.
	maxTextLen = 300
)

// Options say what of a capture is rendered.
type Options struct {
	// Root is the element rendered, with everything under it; it must be
	// in the capture's top document (0: the whole document).
	Root cdp.BackendNodeID
	// FrameURL renders a frame's URL in its mark, given the frame's id
	// ("" when not known) (nil: as it is): the executor masks it for
	// whoever chose it there.
	FrameURL func(frame, url string) string
}

// Page is a capture rendered: the page's text and the elements its refs
// name. Parts are the same text in pieces, each with the documents it
// came from (Part), so that each is masked for its own documents' secrets.
type Page struct {
	Text  string
	Parts []Part
	Refs  map[string]Ref
}

// Part is a piece of a rendered page: its text and the documents whose
// content it holds (a frame's document with no host of its own,
// about:blank or srcdoc, counts as the document that embeds it). Own is
// browsergate's own text (the line between the main content and the
// rest), which no document wrote.
type Part struct {
	Text string
	Docs []Doc
	Own  bool
}

// Doc is a document a snapshot shows: its frame's id and its URL.
type Doc struct{ Frame, URL string }

// line is a line of the rendered page and the documents it came from.
type line struct {
	text string
	docs []Doc
}

// Render renders the capture of the tab's process c (with the captures
// of the out-of-process frames it embeds) as the agent reads it. Links
// are shortened against the document the capture read (its URL without
// a fragment, and that URL's origin), not a URL read before it: the page
// may have moved in between.
func Render(c *Capture, opts Options) (Page, error) {
	if c == nil || c.Layout == nil || len(c.Layout.Documents) == 0 {
		return Page{}, ErrNoDocument
	}
	layout := c.Layout
	page, _, _ := strings.Cut(StringAt(layout.Strings, layout.Documents[0].DocumentURL), "#")
	r := &renderer{snap: layout, ax: c.AX, cur: c, origin: origin(page), page: page, refs: map[string]Ref{}, opts: opts,
		doc: Doc{StringAt(layout.Strings, layout.Documents[0].FrameID), StringAt(layout.Strings, layout.Documents[0].DocumentURL)}}
	v := newDocView(layout.Documents[0])
	r.curTop = v
	root := -1
	for i, id := range v.d.Nodes.BackendNodeID {
		if (opts.Root == 0 && v.d.Nodes.ParentIndex[i] < 0) || (opts.Root != 0 && id == opts.Root) {
			root = i
			break
		}
	}
	if root < 0 {
		return Page{}, ErrRootNotFound
	}
	r.render(v, root)
	text, parts := r.output()
	return Page{Text: text, Parts: parts, Refs: r.refs}, nil
}

// renderer turns one capture into snapshot text.
type renderer struct {
	snap *domsnapshot.CaptureSnapshotResult
	// cur is the capture of the process being rendered: the tab's, or an
	// out-of-process frame's, whose top document is curTop.
	cur    *Capture
	curTop *docView
	hosts  []FrameHost // the iframe elements that lead to cur
	ax     map[cdp.BackendNodeID]*AXNode
	origin string // the page's origin, and its URL without a fragment
	page   string
	refs   map[string]Ref
	next   int
	main   []line // lines of the main landmark
	rest   []line // every other line
	opts   Options
	// doc is the document being rendered; pending are those whose text
	// is in the line being filled (a cell, a link, a block).
	doc      Doc
	pending  []Doc
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

// origin is scheme://host[:port] of a URL ("" for one without a scheme),
// which same-origin links are shortened against.
func origin(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}

// skippedTags never show text of their own.
var skippedTags = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "head": true, "title": true, "meta": true, "link": true}

// landmarkRoles open a section of their own, named on a line.
var landmarkRoles = map[string]bool{"navigation": true, "complementary": true, "banner": true, "contentinfo": true,
	"form": true, "search": true, "region": true, "dialog": true, "alertdialog": true}

// RoleToldApart reports whether the renderer tells an element of role
// apart from one of another role: what it renders of it may differ. The
// executor's element read must give such an element the role the whole
// tree gives it (or none, where its tag renders it alike).
func RoleToldApart(role string) bool { return toldApart[role] }

var toldApart = func() map[string]bool {
	m := map[string]bool{"main": true, "heading": true, "list": true, "listitem": true, "table": true, "grid": true,
		"row": true, "cell": true, "columnheader": true, "rowheader": true, "gridcell": true, "img": true, "image": true,
		"LayoutTable": true, "LayoutTableRow": true, "LayoutTableCell": true}
	for _, set := range []map[string]bool{landmarkRoles, leafControls, containerControls} {
		for r := range set {
			m[r] = true
		}
	}
	return m
}()

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
		display = r.style(v, li, styleDisplay)
	}
	if shown && display == "none" {
		return
	}
	ax := r.ax[nodes.BackendNodeID[i]]
	role := ""
	if ax != nil {
		role = ax.Role
	}
	if tag == "iframe" || tag == "frame" {
		if doc, ok := v.rare.contentDoc[i]; ok {
			r.frame(v, i, doc)
		} else if fc := r.oopifAt(nodes.BackendNodeID[i]); fc != nil && shown {
			r.oopif(fc, FrameHost{OOPIF: r.cur.Target, Node: nodes.BackendNodeID[i], Nested: v != r.curTop})
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
		if ax != nil && ax.Name != "" {
			r.text("!["+ax.Name+"]", true)
		}
	case tag == "br":
		r.flush()
	case landmarkRoles[role] && tag != "form" || tag == "form" && ax != nil && ax.Name != "":
		r.flush()
		head := role
		if ax != nil && ax.Name != "" {
			head += " " + strconv.Quote(clip(ax.Name, MaxNameLen))
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
			role = ax.Role
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
	vis := r.style(v, li, styleVisibility)
	return vis == "hidden" || vis == "collapse"
}

// parentWhiteSpace is the white-space style of the element a text node is in.
func (r *renderer) parentWhiteSpace(v *docView, i int) string {
	p := int(v.d.Nodes.ParentIndex[i])
	if li, ok := v.layout[p]; ok {
		return r.style(v, li, styleWhiteSpace)
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
	r.noteDoc()
}

// noteDoc notes that the line being filled holds text of the document
// being rendered.
func (r *renderer) noteDoc() {
	if !slices.Contains(r.pending, r.doc) {
		r.pending = append(r.pending, r.doc)
	}
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
	r.noteDoc()
	l := line{text: s, docs: slices.Clone(r.pending)}
	if r.inMain > 0 {
		r.main = append(r.main, l)
	} else {
		r.rest = append(r.rest, l)
	}
	if r.inline.Len() == 0 && r.tableRow == nil {
		r.pending = nil
	}
}

// output is the rendered page: the main landmark's lines first; as one
// text, and in parts, each of the lines of the same documents in a row.
func (r *renderer) output() (string, []Part) {
	r.flush()
	var parts []Part
	add := func(lines []line) {
		for _, l := range lines {
			if n := len(parts); n > 0 && !parts[n-1].Own && slices.Equal(parts[n-1].Docs, l.docs) {
				parts[n-1].Text += "\n" + l.text
				continue
			}
			if len(parts) > 0 {
				parts = append(parts, Part{Text: "\n", Own: true})
			}
			parts = append(parts, Part{Text: l.text, Docs: l.docs})
		}
	}
	add(r.main)
	if len(r.main) > 0 && len(r.rest) > 0 {
		parts = append(parts, Part{Text: "\n\n(outside the main content:)", Own: true})
	}
	add(r.rest)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), parts
}

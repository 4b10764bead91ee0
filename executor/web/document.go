package web

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Document is a fetched HTML page, parsed (golang.org/x/net/html, the
// HTML5 parsing algorithm browsers use).
type Document struct {
	Root *html.Node
	// URL is the page's URL; Base is what its links resolve against (its
	// <base href>, when it has one inside the same scheme family).
	URL, Base *url.URL
}

// MaxNodes bounds the nodes a page Parse reads may make (estimateNodes). A
// parsed page costs a few hundred bytes a node, and its conversion to text
// several times that, all before max_length cuts the reply: the bound keeps
// one page to tens of MB. Long reference pages are well inside it (the Go
// specification is estimated at about 23,000; a long Wikipedia article at
// 10,000 to 60,000).
const MaxNodes = 150000

// ErrTooLarge is Parse's refusal of a page over MaxNodes.
var ErrTooLarge = fmt.Errorf("the page would make more than %d nodes: too large to read without a browser", MaxNodes)

// Parse reads body as HTML in the encoding its Content-Type (or its own
// <meta charset>, or a sniff) names, converted to UTF-8. A page estimated
// at more than MaxNodes nodes is refused (ErrTooLarge) before it is
// parsed.
func Parse(body []byte, contentType, pageURL string) (*Document, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return nil, fmt.Errorf("decode the page: %w", err)
	}
	text, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decode the page: %w", err)
	}
	if estimateNodes(text) > MaxNodes {
		return nil, ErrTooLarge
	}
	root, err := html.Parse(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse the page's HTML: %w", err)
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		return nil, err
	}
	d := &Document{Root: root, URL: u, Base: u}
	if b := find(root, atom.Base); b != nil {
		if href, ok := attr(b, "href"); ok {
			if bu, err := u.Parse(strings.TrimSpace(href)); err == nil && (bu.Scheme == "http" || bu.Scheme == "https") {
				d.Base = bu
			}
		}
	}
	return d, nil
}

// estimateNodes bounds from above the nodes html.Parse makes of an HTML
// document (in UTF-8), with the tokenizer alone (no tree, no copies),
// stopping past MaxNodes. What the parser makes beyond one node a token is
// counted too:
//
//   - up to 2 implied elements a token (html, head, body, tbody, tr,
//     colgroup, an implied p, …);
//   - the active formatting elements (b, i, font, a, … not yet closed),
//     which the parser clones again before every text or element after a
//     block closes them ("reconstruct the active formatting elements"):
//     each token counts them all;
//   - the adoption agency algorithm's clones for a misnested formatting
//     end tag (at most 8 rounds of a few clones): 32 for each such end tag
//     that does not close the element opened last (a rough stack of open
//     elements tells);
//   - inside svg and math, style, title, script and the like are not raw
//     text to the parser, so the tokenizer is told so and counts what is
//     inside them as markup (counting more, never less).
func estimateNodes(body []byte) int {
	z := html.NewTokenizer(bytes.NewReader(body))
	n, foreign := 0, 0
	formatting := map[atom.Atom]int{}
	active := 0
	var open []atom.Atom // a rough stack of open elements
	for n <= MaxNodes {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return n
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			n += 3 + active
			switch {
			case a == atom.Svg || a == atom.Math:
				if tt == html.StartTagToken {
					foreign++
				}
			case formattingElements[a] && tt == html.StartTagToken:
				formatting[a]++
				active++
			}
			if tt == html.StartTagToken && !voidElements[a] {
				open = append(open, a)
			}
			if foreign > 0 {
				z.NextIsNotRawText()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			nested := len(open) > 0 && open[len(open)-1] == a
			for i := len(open) - 1; i >= 0; i-- {
				if open[i] == a {
					open = open[:i]
					break
				}
			}
			switch {
			case (a == atom.Svg || a == atom.Math) && foreign > 0:
				foreign--
			case formattingElements[a]:
				if !nested {
					n += 32
				}
				if formatting[a] > 0 {
					formatting[a]--
					active--
				}
			}
		case html.TextToken:
			n += 1 + active
		}
	}
	return n
}

// voidElements are HTML's elements without content (no end tag).
var voidElements = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true, atom.Hr: true, atom.Img: true,
	atom.Input: true, atom.Link: true, atom.Meta: true, atom.Source: true, atom.Track: true, atom.Wbr: true,
}

// formattingElements are HTML's formatting elements, which the parser
// keeps in its list of active formatting elements.
var formattingElements = map[atom.Atom]bool{
	atom.A: true, atom.B: true, atom.Big: true, atom.Code: true, atom.Em: true, atom.Font: true, atom.I: true,
	atom.Nobr: true, atom.S: true, atom.Small: true, atom.Strike: true, atom.Strong: true, atom.Tt: true, atom.U: true,
}

// Title is the text of the document's <title>, spaces collapsed.
func (d *Document) Title() string { return documentTitle(d.Root) }

// documentTitle is the text of the first <title> under n that has any,
// spaces collapsed.
func documentTitle(n *html.Node) string {
	title := ""
	walk(n, func(x *html.Node) bool {
		if title != "" {
			return false
		}
		if x.Type == html.ElementNode && x.DataAtom == atom.Title {
			title = collapse(textContent(x))
			return false
		}
		return true
	})
	return title
}

// Forms is how many <form> elements the document has.
func (d *Document) Forms() int {
	n := 0
	walk(d.Root, func(x *html.Node) bool {
		if x.Type == html.ElementNode && x.DataAtom == atom.Form {
			n++
		}
		return true
	})
	return n
}

// LogoutControl reports whether the page shows a log out / sign out / log
// off control (a link or button), the page half of is_authenticated.
func (d *Document) LogoutControl() bool {
	found := false
	walk(d.Root, func(x *html.Node) bool {
		if found {
			return false
		}
		if x.Type == html.ElementNode && (x.DataAtom == atom.A || x.DataAtom == atom.Button) {
			t := strings.ToLower(collapse(textContent(x)))
			for _, w := range []string{"log out", "logout", "sign out", "signout", "log off"} {
				if strings.Contains(t, w) {
					found = true
				}
			}
			return false
		}
		return true
	})
	return found
}

// Link is one <a href> of a page.
type Link struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// Links are the document's <a href> links, resolved against its base, in
// document order, each once (by URL and text). Links that do not resolve
// to http(s) (javascript:, mailto:, fragments of this page) are left out.
func (d *Document) Links() []Link {
	var out []Link
	seen := map[Link]bool{}
	walk(d.Root, func(x *html.Node) bool {
		if x.Type != html.ElementNode || x.DataAtom != atom.A {
			return true
		}
		href, ok := attr(x, "href")
		if !ok {
			return true
		}
		u, err := d.Base.Parse(strings.TrimSpace(href))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return true
		}
		if u.Fragment != "" && sameDocument(u, d.URL) {
			return true
		}
		text := collapse(textContent(x))
		if text == "" {
			if img := find(x, atom.Img); img != nil {
				text, _ = attr(img, "alt")
				text = collapse(text)
			}
		}
		l := Link{Text: text, URL: u.String()}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
		return true
	})
	return out
}

func sameDocument(a, b *url.URL) bool {
	x, y := *a, *b
	x.Fragment, y.Fragment = "", ""
	x.RawFragment, y.RawFragment = "", ""
	return x.String() == y.String()
}

// Table is one <table> of a page: its header cells (the first row of
// <th> cells, or of <thead>; "" when it has none) and its rows, each a
// record of header → cell. Where a row has more cells than headers, the
// extra ones are named "column N".
type Table struct {
	Caption string              `json:"caption,omitempty"`
	Headers []string            `json:"headers"`
	Rows    []map[string]string `json:"rows"`
	// Keys are the rows' keys in column order (a repeated header is
	// "name (N)", a cell beyond the headers "column N").
	Keys []string `json:"-"`
}

// Tables are the document's tables, outermost first; a table nested in a
// cell is a table of its own and its text is not repeated in the cell.
func (d *Document) Tables() []Table {
	var out []Table
	walk(d.Root, func(x *html.Node) bool {
		if x.Type == html.ElementNode && x.DataAtom == atom.Table {
			out = append(out, readTable(x))
		}
		return true
	})
	return out
}

func readTable(t *html.Node) Table {
	var tab Table
	if c := find(t, atom.Caption); c != nil && ownTable(c) == t {
		tab.Caption = collapse(textContent(c))
	}
	var rows [][]*html.Node
	var headerRow = -1
	walk(t, func(x *html.Node) bool {
		if x != t && x.Type == html.ElementNode && x.DataAtom == atom.Table {
			return false // a nested table is its own
		}
		if x.Type == html.ElementNode && x.DataAtom == atom.Tr {
			var cells []*html.Node
			allTH := true
			for c := x.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.DataAtom == atom.Td || c.DataAtom == atom.Th) {
					cells = append(cells, c)
					allTH = allTH && c.DataAtom == atom.Th
				}
			}
			inHead := x.Parent != nil && x.Parent.DataAtom == atom.Thead
			if headerRow < 0 && len(rows) == 0 && len(cells) > 0 && (allTH || inHead) {
				headerRow = 0
			}
			if len(cells) > 0 {
				rows = append(rows, cells)
			}
			return false
		}
		return true
	})
	// A first row of one header cell over a wider table is a title (an
	// infobox's), not the columns' names.
	if headerRow == 0 && len(rows[0]) == 1 && len(rows) > 1 && len(rows[1]) > 1 {
		if tab.Caption == "" {
			tab.Caption = cellText(rows[0][0])
		}
		rows, headerRow = rows[1:], -1
	}
	body := rows
	if headerRow == 0 {
		for _, c := range rows[0] {
			tab.Headers = append(tab.Headers, cellText(c))
		}
		body = rows[1:]
	}
	width := len(tab.Headers)
	for _, r := range body {
		width = max(width, len(r))
	}
	seen := map[string]bool{}
	for i := range width {
		key := fmt.Sprintf("column %d", i+1)
		if i < len(tab.Headers) && tab.Headers[i] != "" {
			key = tab.Headers[i]
			if seen[key] {
				key = fmt.Sprintf("%s (%d)", key, i+1)
			}
		}
		seen[key] = true
		tab.Keys = append(tab.Keys, key)
	}
	for _, r := range body {
		rec := make(map[string]string, len(r))
		for i, c := range r {
			rec[tab.Keys[i]] = cellText(c)
		}
		tab.Rows = append(tab.Rows, rec)
	}
	if tab.Headers == nil {
		tab.Headers = []string{}
	}
	if tab.Rows == nil {
		tab.Rows = []map[string]string{}
	}
	return tab
}

// cellText is a cell's text without the text of tables nested in it.
func cellText(c *html.Node) string {
	var b strings.Builder
	walk(c, func(x *html.Node) bool {
		if x != c && x.Type == html.ElementNode && x.DataAtom == atom.Table {
			return false
		}
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
			b.WriteByte(' ')
		}
		return true
	})
	return collapse(b.String())
}

// ownTable is the table n belongs to (nil: none).
func ownTable(n *html.Node) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.DataAtom == atom.Table {
			return p
		}
	}
	return nil
}

// walk visits n and its descendants in document order; visit returns
// false to skip a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// find is the first element of kind a under n (n included; nil: none).
func find(n *html.Node, a atom.Atom) *html.Node {
	var out *html.Node
	walk(n, func(x *html.Node) bool {
		if out != nil {
			return false
		}
		if x.Type == html.ElementNode && x.DataAtom == a {
			out = x
			return false
		}
		return true
	})
	return out
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// textContent is the text under n.
func textContent(n *html.Node) string {
	var b bytes.Buffer
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		return true
	})
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

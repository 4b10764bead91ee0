package web

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// minReadable is the length under which the main content Readability
// finds is taken to be a miss (a page that is mostly a form, say): the
// whole body is given instead, and the reply says so.
const minReadable = 200

// Markdown converts a page to Markdown: its main content (mode "main" or
// "") as Mozilla's Readability finds it (go-readability, a line-by-line
// port), or its whole body ("raw"). Links are made absolute against
// pageURL. The conversion is html-to-markdown's (CommonMark, with its
// table plugin). The read command of the browser engine uses it.
func Markdown(root *html.Node, pageURL, mode string) (string, error) {
	title := documentTitle(root)
	var content *html.Node
	note := ""
	if mode != "raw" {
		pageBase, _ := url.Parse(pageURL)
		p := readability.NewParser()
		p.KeepClasses = true // a code block's class names its language
		if a, err := p.ParseDocument(root, pageBase); err == nil && a.Node != nil && len(textContent(a.Node)) >= minReadable {
			content = a.Node
			if t := a.Title(); t != "" {
				title = t
			}
		} else {
			note = "(no main content found: the whole page follows)\n\n"
		}
	}
	if content == nil {
		content = find(root, atom.Body)
	}
	if content == nil {
		return note + "(the page has no body)", nil
	}
	md, err := toMarkdown(content, pageURL)
	if err != nil {
		return "", err
	}
	if title != "" && !strings.HasPrefix(md, "# ") {
		md = "# " + title + "\n\n" + md
	}
	return note + md, nil
}

// Text is fetch_page's text: the page's body as Markdown text, headings
// kept (# …), lists and tables kept, without what is not the page's text
// (script, style, noscript, template, svg, iframe) and without its
// navigation, footer and asides; links are their text alone and images
// are left out.
func (d *Document) Text() (string, error) {
	body := find(d.Root, atom.Body)
	if body == nil {
		return "", nil
	}
	clean := cloneTree(body)
	var drop []*html.Node
	var unwrap []*html.Node
	walk(clean, func(x *html.Node) bool {
		if x.Type != html.ElementNode {
			return true
		}
		switch x.DataAtom {
		case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe,
			atom.Nav, atom.Footer, atom.Aside, atom.Img, atom.Picture, atom.Video, atom.Audio, atom.Canvas,
			atom.Object, atom.Embed, atom.Button, atom.Select, atom.Input, atom.Textarea:
			drop = append(drop, x)
			return false
		case atom.A:
			unwrap = append(unwrap, x)
		}
		if hidden(x) {
			drop = append(drop, x)
			return false
		}
		return true
	})
	for _, x := range drop {
		x.Parent.RemoveChild(x)
	}
	for _, x := range unwrap {
		for c := x.FirstChild; c != nil; {
			next := c.NextSibling
			x.RemoveChild(c)
			x.Parent.InsertBefore(c, x)
			c = next
		}
		x.Parent.RemoveChild(x)
	}
	return toMarkdown(clean, d.URL.String())
}

// hidden: the element is hidden by its own markup (hidden, aria-hidden,
// display:none inline), as a reader would not see it.
func hidden(x *html.Node) bool {
	if _, ok := attr(x, "hidden"); ok {
		return true
	}
	if v, _ := attr(x, "aria-hidden"); v == "true" {
		return true
	}
	st, _ := attr(x, "style")
	st = strings.ReplaceAll(strings.ToLower(st), " ", "")
	return strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden")
}

// cloneTree is a deep copy of n, detached.
func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace, Attr: append([]html.Attribute(nil), n.Attr...)}
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c.AppendChild(cloneTree(k))
	}
	return c
}

func toMarkdown(n *html.Node, pageURL string) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal))))
	md, err := conv.ConvertNode(n, converter.WithDomain(pageURL))
	if err != nil {
		return "", fmt.Errorf("convert the page to Markdown: %w", err)
	}
	return tidyMarkdown(string(md)), nil
}

var blankRuns = regexp.MustCompile(`\n{3,}`)

// tidyMarkdown drops trailing spaces and runs of blank lines.
func tidyMarkdown(md string) string {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(blankRuns.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

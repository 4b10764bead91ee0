package executor

import (
	"bytes"
	"context"
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

// read gives the page's content as Markdown, for reading documentation and
// articles: with mode "main" (the default) the main content as Mozilla's
// Readability finds it (go-readability, a line-by-line port), with "raw"
// the whole body. The HTML is the live document's, read in the gate's
// isolated world; links are made absolute against the page's URL. The
// conversion is html-to-markdown's (CommonMark, with its table plugin).
// Like a snapshot, a long page comes in pages, never cut.

// minReadable is the length under which the main content Readability
// finds is taken to be a miss (a page that is mostly a form, say): the
// whole body is given instead, and the reply says so.
const minReadable = 200

func actRead(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	if n, _ := args["page"].(int64); n > 1 {
		text, err := s.nextPage("read", int(n))
		return output{Text: text}, err
	}
	var doc struct {
		HTML string `json:"html"`
		URL  string `json:"url"`
	}
	if err := s.evalValueInWorld(ctx, "({html: document.documentElement.outerHTML, url: document.URL})", &doc); err != nil {
		return output{}, fmt.Errorf("read the page: %w", err)
	}
	mode, _ := args["mode"].(string)
	md, err := pageMarkdown(doc.HTML, doc.URL, mode)
	if err != nil {
		return output{}, err
	}
	budget := defaultSnapshotBudget
	if n, ok := args["max_chars"].(int64); ok {
		budget = int(n)
	}
	return output{Text: s.firstPage("read", s.maskText(md), budget)}, nil
}

// pageMarkdown converts a page's HTML to Markdown: its main content
// (mode "main" or "") or its whole body ("raw").
func pageMarkdown(page, pageURL, mode string) (string, error) {
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", fmt.Errorf("parse the page's HTML: %w", err)
	}
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
		content = bodyOf(root)
	}
	if content == nil {
		return note + "(the page has no body)", nil
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal))))
	md, err := conv.ConvertNode(content, converter.WithDomain(pageURL))
	if err != nil {
		return "", fmt.Errorf("convert the page to Markdown: %w", err)
	}
	out := tidyMarkdown(string(md))
	if title != "" && !strings.HasPrefix(out, "# ") {
		out = "# " + title + "\n\n" + out
	}
	return note + out, nil
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

// documentTitle is the text of the document's <title>.
func documentTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		return collapse(textContent(n))
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := documentTitle(c); t != "" {
			return t
		}
	}
	return ""
}

// bodyOf is the document's <body> (nil: none).
func bodyOf(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if b := bodyOf(c); b != nil {
			return b
		}
	}
	return nil
}

// textContent is the text under n.
func textContent(n *html.Node) string {
	var b bytes.Buffer
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

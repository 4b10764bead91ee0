package executor

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/toolclad"
)

// read gives the page's content as Markdown, for reading documentation and
// articles: with mode "main" (the default) the main content as Mozilla's
// Readability finds it (go-readability, a line-by-line port), with "raw"
// the whole body. The HTML is the live document's, read in the gate's
// isolated world; links are made absolute against the page's URL. The
// conversion is html-to-markdown's (CommonMark, with its table plugin).
// Like a snapshot, a long page comes in pages, never cut.

func actRead(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	if n, _ := args["page"].(int64); n > 1 {
		return s.nextPage("read", int(n))
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
	return s.firstPage("read", s.maskText(md), budget), nil
}

// pageMarkdown converts a page's HTML to Markdown (web.Markdown): its main
// content (mode "main", "" or wcore-browser's names for it, "main_content"
// and "article") or its whole body ("raw").
func pageMarkdown(page, pageURL, mode string) (string, error) {
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", fmt.Errorf("parse the page's HTML: %w", err)
	}
	return web.Markdown(root, pageURL, toolclad.ReadMode(mode))
}

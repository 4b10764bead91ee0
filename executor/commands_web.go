package executor

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// The browserless engine's commands (webengine.go): fetch_page,
// search_web and download_file, over plain HTTP through the session's
// client (websession.go).

// readSlots bound how many pages the browserless engine parses and
// converts at once, daemon-wide: each may take tens of MB (web.MaxNodes).
var readSlots = make(chan struct{}, max(2, runtime.NumCPU()))

// takeReadSlot waits for a read slot, within the call's time.
func takeReadSlot(ctx context.Context) (func(), error) {
	select {
	case readSlots <- struct{}{}:
		return func() { <-readSlots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to read the page (other pages are being read): %w", ctx.Err())
	}
}

// webGet fetches a URL for a command: the refusals of the scope and of
// the egress proxy are said as such, naming the hop.
func (s *session) webGet(ctx context.Context, u, accept, encoding string) (*web.Response, error) {
	h := http.Header{}
	if accept != "" {
		h.Set("Accept", accept)
	}
	if encoding != "" {
		h.Set("Accept-Encoding", encoding)
	}
	resp, err := s.web.client.Get(ctx, u, h)
	var ref *web.Refused
	var proxied *egress.RefusedError
	switch {
	case errors.As(err, &ref):
		s.egress.blocked.add(Blocked{Time: time.Now(), URL: ref.URL, Rule: ref.Rule, Reason: ref.Reason, Layer: "engine"})
		if ref.Hop > 0 {
			return nil, fmt.Errorf("refused: redirect %d goes to %s: %s; it was not followed", ref.Hop, inert(ref.URL), ref.Reason)
		}
		return nil, fmt.Errorf("refused: %s", ref.Reason)
	case errors.As(err, &proxied):
		// (The proxy's own refusals reach the block log through its
		// OnDecision.)
		return nil, fmt.Errorf("refused by the egress gate (%s): %s", proxied.Rule, proxied.Reason)
	case err != nil:
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w (the command's timeout_seconds)", u, ctx.Err())
		}
		return nil, err
	}
	return resp, nil
}

// readBody reads a response's body, within [browser.http]
// max_response_bytes.
func (s *session) readBody(resp *web.Response) ([]byte, error) {
	defer resp.Body.Close()
	max := s.manifest.Browser.HTTP.MaxResponseBytes
	if resp.ContentLength > max {
		return nil, fmt.Errorf("%s: the response is %d bytes, larger than max_response_bytes (%d bytes); nothing was read", inert(resp.URL), resp.ContentLength, max)
	}
	b, err := web.ReadCapped(resp.Body, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was read", inert(resp.URL), err)
	}
	return b, nil
}

// readable reports whether fetch_page reads a media type: HTML as a
// document; text, JSON and XML as text.
func readable(mediaType string) bool {
	switch {
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/xhtml+xml", mediaType == "application/json", mediaType == "application/xml",
		strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"):
		return true
	}
	return false
}

// actFetchPage fetches a page and returns what extract asks of it.
func actFetchPage(ctx context.Context, s *session, args map[string]any, _ *facts) (output, error) {
	u, _ := args["url"].(string)
	extract, _ := args["extract"].(string)
	if extract == "" {
		extract = "text"
	}
	maxLen := 5000
	if n, ok := args["max_length"].(int64); ok {
		maxLen = int(n)
	}
	resp, err := s.webGet(ctx, u, "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5", "")
	if err != nil {
		return output{}, err
	}
	body, err := s.readBody(resp)
	if err != nil {
		return output{}, err
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ctype == "" {
		ctype = strings.SplitN(http.DetectContentType(body), ";", 2)[0]
	}
	if resp.StatusCode/100 != 2 {
		return output{}, fmt.Errorf("%s answered HTTP %s", inert(resp.URL), resp.Status)
	}
	if !readable(ctype) {
		return output{}, fmt.Errorf("%s is %s, not a page fetch_page reads%s", inert(resp.URL), ctype, offer(s.manifest, ": download it with download_file", "download_file", "url"))
	}
	isHTML := ctype == "text/html" || ctype == "application/xhtml+xml"
	st := PageState{URL: resp.URL, PageLoaded: true, TabCount: 1}
	if pu, err := scope.ParseURL(resp.URL); err == nil {
		st.Domain = pu.Host
	}
	// Parsing and converting a page takes tens of MB: a few at a time.
	release, err := takeReadSlot(ctx)
	if err != nil {
		return output{}, err
	}
	defer release()
	var doc *web.Document
	if isHTML {
		if doc, err = web.Parse(body, resp.Header.Get("Content-Type"), resp.URL); err != nil {
			if errors.Is(err, web.ErrTooLarge) {
				err = fmt.Errorf("%w%s", err, offer(s.manifest, " (download_file saves it whole)", "download_file", "url"))
			}
			return output{}, err
		}
		st.Title, st.HasForms, st.IsAuthenticated = doc.Title(), doc.Forms() > 0, doc.LogoutControl()
	}
	if ju, err := url.Parse(resp.URL); err == nil && !st.IsAuthenticated {
		st.IsAuthenticated = s.web.sessionCookie(ju)
	}
	s.web.page = st

	var text string
	var items []string // the links' or tables' parts of text, in order
	switch {
	case extract == "html" || !isHTML:
		text = toValidUTF8(body)
	case extract == "text":
		if text, err = doc.Text(); err != nil {
			return output{}, err
		}
	case extract == "links":
		for _, l := range doc.Links() {
			items = append(items, s.maskPage(fmt.Sprintf("- [%s](%s)\n", l.Text, l.URL), hostOf(resp.URL)))
		}
	case extract == "tables":
		for i, tab := range doc.Tables() {
			items = append(items, s.maskPage(tableText(i+1, tab), hostOf(resp.URL)))
		}
	}
	if items != nil {
		text = strings.Join(items, "")
	} else {
		text = s.maskPage(text, hostOf(resp.URL)) // before the cut: a cut secret would show its prefix
	}
	start := 0
	if n, ok := args["start_index"].(int64); ok {
		start = int(n)
	}
	w, err := windowOf(text, start, maxLen)
	if err != nil {
		return output{}, err
	}
	var structured map[string]any
	// Structured content (links, tables) holds the items the text shows
	// whole, and how many the page has.
	switch first, n := w.whole(items); extract {
	case "links":
		if isHTML {
			links := doc.Links()
			structured = map[string]any{"links": links[first : first+n], "total": len(links)}
		}
	case "tables":
		if isHTML {
			tables := doc.Tables()
			structured = map[string]any{"tables": tables[first : first+n], "total": len(tables)}
		}
	}
	head := fmt.Sprintf("Title: %s\nURL: %s\nFetched: %s\nLength: %d characters",
		pagetext.Value(st.Title), pagetext.Value(resp.URL), s.web.fetchTime().UTC().Format(time.RFC3339), w.total)
	if len(resp.Hops) > 1 {
		head += fmt.Sprintf(" (after %d redirects)", len(resp.Hops)-1)
	}
	if asked, ok := s.web.clamped["max_length"]; ok {
		head += fmt.Sprintf("; max_length %d was clamped to %d", asked, maxLen)
	}
	if w.start > 0 || w.end < w.total {
		head += fmt.Sprintf("; characters %d to %d follow", w.start, w.end)
	}
	if w.end < w.total {
		head += "; the rest: " + fetchNext(u, w.end, args, s.web.asked)
	}
	return output{Text: head + "\n\n" + w.text, Structured: structured}, nil
}

// window is the part of a reply's text that one fetch_page reply shows:
// characters [start, end) of total.
type window struct {
	text              string
	start, end, total int
}

// windowOf is the window of text from character start, at most n long.
// A start past the end is an error that says where the end is; a start
// at the end of an empty text is the empty window.
func windowOf(text string, start, n int) (window, error) {
	total := utf8.RuneCountInString(text)
	if start > total || start == total && total > 0 {
		return window{}, fmt.Errorf("start_index %d is past the end of the page's text, which has %d characters (the first is 0)", start, total)
	}
	rest := text[runeOffset(text, start):]
	shown := cutRunes(rest, n)
	return window{text: shown, start: start, end: start + utf8.RuneCountInString(shown), total: total}, nil
}

// runeOffset is the byte offset of character i of s (len(s) past its
// end).
func runeOffset(s string, i int) int {
	n := 0
	for pos := range s {
		if n == i {
			return pos
		}
		n++
	}
	return len(s)
}

// whole is which of items, the parts the text is made of in order, the
// window shows whole: from index first, n of them.
func (w window) whole(items []string) (first, n int) {
	off := 0
	first = -1
	for i, it := range items {
		end := off + utf8.RuneCountInString(it)
		if off >= w.start && end <= w.end {
			if first < 0 {
				first = i
			}
			n++
		}
		off = end
	}
	if first < 0 {
		first = 0
	}
	return first, n
}

// fetchNext is the call that reads on from character next: the same URL
// and the arguments the call gave that shape the text (extract,
// max_length), with start_index, which fetch_page always takes
// (toolclad's continuation arguments), so the call it offers is never
// refused for its arguments.
func fetchNext(u string, next int, args, asked map[string]any) string {
	call := fmt.Sprintf("fetch_page {url: %s", pagetext.Value(strconv.Quote(u)))
	if e, ok := asked["extract"]; ok && e != nil {
		call += fmt.Sprintf(", extract: %q", args["extract"])
	}
	if m, ok := asked["max_length"]; ok && m != nil {
		call += fmt.Sprintf(", max_length: %d", args["max_length"])
	}
	return call + fmt.Sprintf(", start_index: %d}", next)
}

// tableText is one table as text: its number and caption, then each row
// as header: cell pairs, in column order.
func tableText(n int, t web.Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Table %d", n)
	if t.Caption != "" {
		b.WriteString(": " + t.Caption)
	}
	fmt.Fprintf(&b, " (%d rows)\n", len(t.Rows))
	for _, r := range t.Rows {
		var cells []string
		for _, k := range t.Keys {
			if v, ok := r[k]; ok {
				cells = append(cells, k+": "+v)
			}
		}
		b.WriteString("- " + strings.Join(cells, "; ") + "\n")
	}
	return b.String() + "\n"
}

// cutRunes is s cut to at most n characters.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func toValidUTF8(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// actSearchWeb asks the manifest's search backend.
func actSearchWeb(ctx context.Context, s *session, args map[string]any, _ *facts) (output, error) {
	query, _ := args["query"].(string)
	n := 5
	if v, ok := args["num_results"].(int64); ok {
		n = int(v)
	}
	sc := s.manifest.Browser.Search
	reqURL, err := web.SearchURL(sc.Backend, sc.URL, query)
	if err != nil {
		return output{}, err
	}
	accept := "text/html"
	if sc.Backend == toolclad.SearchSearXNG {
		accept = "application/json"
	}
	resp, err := s.webGet(ctx, reqURL, accept, "")
	if err != nil {
		return output{}, fmt.Errorf("search backend %s: %w", sc.Backend, err)
	}
	body, err := s.readBody(resp)
	if err != nil {
		return output{}, fmt.Errorf("search backend %s: %w", sc.Backend, err)
	}
	if resp.StatusCode/100 != 2 {
		return output{}, fmt.Errorf("search backend %s answered HTTP %s", sc.Backend, resp.Status)
	}
	var results []web.Result
	switch sc.Backend {
	case toolclad.SearchSearXNG:
		if results, err = web.ParseSearXNG(body, n); err != nil {
			return output{}, err
		}
	default:
		release, err := takeReadSlot(ctx)
		if err != nil {
			return output{}, err
		}
		doc, err := web.Parse(body, resp.Header.Get("Content-Type"), resp.URL)
		if err == nil {
			results = web.ParseDuckDuckGo(doc, n)
		}
		release()
		if err != nil {
			return output{}, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d results from %s", len(results), sc.Backend)
	if len(results) > 0 {
		b.WriteString(" (the URLs are not fetched yet" + offer(s.manifest, ": fetch_page judges each against the scope", "fetch_page", "url") + ")")
	}
	b.WriteString("\n")
	host := hostOf(sc.URL) // the results are the search page's
	for i, r := range results {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, s.maskPage(r.Title, host), s.maskPage(r.URL, host))
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", s.maskPage(r.Snippet, host))
		}
	}
	if results == nil {
		results = []web.Result{}
	}
	return output{Text: strings.TrimRight(b.String(), "\n"), Structured: map[string]any{"results": results}}, nil
}

// actDownloadFile streams a URL into the download directory.
func actDownloadFile(ctx context.Context, s *session, args map[string]any, _ *facts) (output, error) {
	u, _ := args["url"].(string)
	asked, _ := args["filename"].(string)
	files := s.manifest.Browser.Files
	if files.DownloadDir == "" {
		return output{}, errors.New("the manifest declares no [browser.files] download_dir")
	}
	// identity: the file as the server has it (a .tar.gz served with
	// Content-Encoding gzip is not saved decompressed), hashed as such.
	resp, err := s.webGet(ctx, u, "", "identity")
	if err != nil {
		return output{}, err
	}
	defer resp.Body.Close()
	return saveResponse(resp.Response, resp.URL, inert(resp.URL), asked, files.DownloadDir, files.MaxDownloadBytes, strictNaming)
}

package main

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	xhtml "golang.org/x/net/html"
)

// consoleHostileTitle is a page title made to break out of the console's HTML:
// markup, a script, quotes for attributes, an event handler, a bidi
// override, ESC, and length.
const consoleHostileTitle = `</title></pre><b id=bg-injected>INJECTED</b><script>window.bgPwned=1</script>"'><img src=x onerror="window.bgPwned=2">` +
	"\u202Egnp.exe\u202C \x1b[31mred\x1b[0m " + "'\"><svg onload=window.bgPwned=3>"

// TestConsoleEscapesHostilePages: an agent visits a page whose title,
// text and URL hold markup, a script, quotes, event handlers, a bidi override
// and ESC, and is refused a URL of the same kind; the console's index
// and the session's timeline, fetched over HTTP and rendered in Chromium,
// show them as text (the timeline shows the URL in the arguments and
// the text in the snapshot's output; the title is in no console page): no element, attribute or script of the page's
// making exists in the console's document, the only scripts are the
// console's own, and the title's text is there, escaped. (How the bidi
// override and ESC are shown is logged, not judged here.)
func TestConsoleEscapesHostilePages(t *testing.T) {
	t.Parallel()
	tokens := operatorFile(t)
	long := strings.Repeat("<i>long</i>", 2000)
	site, _ := serveLogged(t, map[string]string{
		"/h/'><svg onload=window.bgPwned=4>": `<title>` + html.EscapeString(consoleHostileTitle+long) + `</title><p>` + html.EscapeString(consoleHostileTitle) + `</p>`,
	})
	d := startHTTP(t, inputManifest(), "", "--operator-token-file", tokens)
	agent := d.connect(t, "alice-token")
	hostileURL := site + "/h/'><svg onload=window.bgPwned=4>?q=\"><script>window.bgPwned=5</script>&r='onmouseover='x#\"'><b id=bg-injected>"
	if out, refused := callText(t, agent, "e2e.navigate", map[string]any{"url": hostileURL}); refused || !strings.Contains(out, "INJECTED") {
		t.Fatalf("the hostile page (refused %v):\n%s", refused, out)
	}
	callText(t, agent, "e2e.snapshot", nil)
	if _, refused := callText(t, agent, "e2e.navigate", map[string]any{"url": "http://127.0.0.9/'><script>window.bgPwned=6</script>\u202E\"><b id=bg-injected>"}); !refused {
		t.Fatal("a navigation out of the scope was allowed")
	}

	// Over HTTP, as the operator.
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.PostForm(d.url+"/console/login", url.Values{"token": {olga}})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	base := resp.Request.URL.String()
	sessionPath := regexp.MustCompile(`/console/s/[0-9a-f]+/sessions/[^"]+`).FindString(string(index))
	if !strings.HasSuffix(base, "/") || sessionPath == "" {
		t.Fatalf("signed in at %s, no session link:\n%s", base, index)
	}
	resp, err = client.Get(d.url + sessionPath)
	if err != nil {
		t.Fatal(err)
	}
	timeline, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for name, page := range map[string]string{"index": string(index), "session": string(timeline)} {
		checkConsoleDocument(t, name, page)
		t.Logf("%s page: the bidi override shows as %s, ESC as %s", name, shownAs(page, "\u202E", `\u202E`), shownAs(page, "\x1b", `\x1b`))
	}
	if !strings.Contains(string(timeline), html.EscapeString(`<script>window.bgPwned=5</script>`)) {
		t.Errorf("the session's timeline does not show the hostile URL as text:\n%s", timeline)
	}
	if !strings.Contains(string(timeline), html.EscapeString(`<b id=bg-injected>INJECTED</b>`)) {
		t.Errorf("the session's timeline does not show the hostile page's text (the snapshot's output) as text:\n%s", timeline)
	}

	// In Chromium, signed in as an operator would.
	ctx := operatorTab(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.url+"/console/login"),
		chromedp.SendKeys(`input[name=token]`, olga),
		chromedp.Submit(`input[name=token]`),
		chromedp.WaitVisible(`header .who`),
	); err != nil {
		t.Fatal(err)
	}
	home, _ := chromedp.Run(ctx, chromedp.Location())
	key := regexp.MustCompile(`/console/s/[0-9a-f]+/`).FindString(home)
	for _, path := range []string{key, key + strings.TrimPrefix(sessionPath, regexp.MustCompile(`/console/s/[0-9a-f]+/`).FindString(sessionPath))} {
		if err := chromedp.Do(ctx, chromedp.Navigate(d.url+path)); err != nil {
			t.Fatal(err)
		}
		type made struct {
			Injected, Handlers, Scripts, Svg int
			Pwned                            any
			Text                             bool
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[made](`({
  Injected: document.querySelectorAll('#bg-injected, img[src="x"]').length,
  Handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
  Scripts: [...document.scripts].filter(s => !s.src.includes('/console/static/')).length,
  Svg: document.querySelectorAll('svg').length,
  Pwned: window.bgPwned === undefined ? null : window.bgPwned,
  Text: document.body.textContent.includes('<script>window.bgPwned=5</script>') || !location.pathname.includes('/sessions/'),
})`))
		if err != nil {
			t.Fatal(err)
		}
		if got.Injected+got.Handlers+got.Scripts+got.Svg != 0 || got.Pwned != nil || !got.Text {
			t.Errorf("%s in Chromium: the page's markup became the console's: %+v", path, got)
		}
	}
}

// checkConsoleDocument fails the test when page, parsed as a browser
// would, holds an element or attribute the hostile page made: any
// element with id bg-injected, an img or svg, an on* attribute, or a
// script that is not the console's own.
func checkConsoleDocument(t *testing.T, name, page string) {
	t.Helper()
	doc, err := xhtml.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "img", "svg":
				t.Errorf("%s page: a <%s> of the page's making", name, n.Data)
			case "script":
				src := ""
				for _, a := range n.Attr {
					if a.Key == "src" {
						src = a.Val
					}
				}
				if !strings.HasPrefix(src, "/console/static/") {
					t.Errorf("%s page: a script not the console's (src %q)", name, src)
				}
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") || a.Key == "id" && a.Val == "bg-injected" || a.Key == "onmouseover" {
					t.Errorf("%s page: <%s %s=%q> of the page's making", name, n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

// shownAs says how page shows the character raw, or as its escape.
func shownAs(page, raw, escaped string) string {
	var ways []string
	if strings.Contains(page, raw) {
		ways = append(ways, "raw")
	}
	if strings.Contains(page, escaped) {
		ways = append(ways, "the escape "+escaped)
	}
	if ways == nil {
		return "nothing (not shown)"
	}
	return strings.Join(ways, " and ")
}

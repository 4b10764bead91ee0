package executor

import (
	"strings"
	"testing"
)

const readPage = `<!doctype html><html><head><title>Widgets — Docs</title></head><body>
<nav class="sidebar"><ul><li><a href="/a">Sidebar link one</a></li><li><a href="/b">Sidebar link two</a></li></ul></nav>
<main><article>
<h1>Widgets</h1>
<p>A widget turns <code>input</code> into output. It is described at length here, so that the
readability pass sees a real article with enough text to keep: paragraphs, lists, code and a table.
See <a href="/guide">the guide</a> for the whole story.</p>
<h2>Install</h2>
<ol><li>Download it.</li><li>Run it.</li></ol>
<pre><code class="language-go">func main() {
	widget.Run()
}</code></pre>
<h3>Options</h3>
<table><thead><tr><th>Name</th><th>Default</th></tr></thead><tbody><tr><td>size</td><td>3</td></tr></tbody></table>
<p>Widgets are sturdy, cheap and easy to combine with other widgets in a larger machine.</p>
</article></main>
<footer>Copyright footer text</footer>
</body></html>`

// TestPageMarkdown: the main content keeps its headings, lists, code
// block with its language, table and links (absolute), without the
// sidebar; raw keeps the sidebar too.
func TestPageMarkdown(t *testing.T) {
	md, err := pageMarkdown(readPage, "https://docs.example.com/widgets", "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Widgets", "## Install", "### Options", "1. Download it.", "```go\nfunc main() {\n\twidget.Run()\n}\n```",
		"| Name | Default |", "| size | 3 |", "[the guide](https://docs.example.com/guide)", "`input`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("main content lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Sidebar link") || strings.Contains(md, "\n\n\n") {
		t.Errorf("main content has the sidebar or blank runs:\n%s", md)
	}
	raw, err := pageMarkdown(readPage, "https://docs.example.com/widgets", "raw")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw, "[Sidebar link one](https://docs.example.com/a)") || !strings.Contains(raw, "Copyright footer text") {
		t.Errorf("raw lacks the sidebar or footer:\n%s", raw)
	}
	form, err := pageMarkdown(`<title>Sign in</title><form><input name=u><button>Go</button></form>`, "https://x.example/", "main")
	if err != nil || !strings.HasPrefix(form, "(no main content found") {
		t.Errorf("a page with no article does not say so: %q %v", form, err)
	}
}

package executor_test

import (
	"net/http"
	"testing"

	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/internal/testkit"
)

// snapshotPage has each construct the snapshot renders.
const snapshotPage = `<!doctype html><title>Reference</title>
<nav aria-label="Sidebar"><ul><li><a href="/intro">Intro</a></li><li><a href="/ref">Reference</a></li></ul></nav>
<main>
<h1>The <code>Client</code> type</h1>
<p>A <code>Client</code> sends <em>requests</em> to a <a href="/server">server</a>,
   and waits.</p>
<ul><li>one<ul><li>one.a</li></ul></li><li>two</li></ul>
<ol><li>first</li><li>second</li></ol>
<table><tr><th>Order</th><th>Total</th></tr><tr><td>A-1</td><td>12 <b>EUR</b></td></tr></table>
<table><tr><td><p>Left column</p><p>its second block</p></td><td></td><td>Right column</td></tr></table>
<pre><code>func main() {
	run()
}</code></pre>
<form aria-label="Settings"><label>Email <input name=e value="a@b.c"></label>
<label><input type=checkbox checked> Remember</label>
<select aria-label="Size"><option>S</option><option selected>M</option></select>
<select aria-label="Sizes" multiple><option label="Small">S</option><option selected>M</option><option hidden>Secret</option><optgroup label="Big"><option selected>L</option></optgroup></select>
<select aria-label="Colour" style="appearance:base-select"><div><option>Red</option></div><option selected>Blue</option><div hidden><option>Grey</option></div><optgroup label="Dark" hidden><option>Black</option></optgroup></select>
<select aria-label="Tags" multiple size=3 style="appearance:base-select"><option selected>new</option><option>old</option></select>
<button>Save</button></form>
<option>A stray option</option><option style="visibility:hidden">An unseen option</option>
<script>{const c = document.querySelector('[aria-label=Colour]'); const inner = document.createElement('select'); inner.innerHTML = '<option>Nested</option>';
const dl = document.createElement('datalist'); dl.innerHTML = '<option>Listed</option>'; c.append(inner, dl)}</script>
<p style="display:none">invisible</p><p style="visibility:hidden">unseen</p>
<img alt="A diagram"> <img alt="">
</main>
<footer>Footer text</footer>`

// TestSnapshotFormat renders a page with every construct through real
// Chromium: one line per block, inline code kept in place, lists with
// their nesting and numbers, a table as rows with each cell's text once
// (one Chromium takes for layout as the blocks it lays out),
// a code block with its lines, controls with refs and states (their name
// left out where their label shows it; a select's options by their labels,
// wherever they are in it but for those of a select or datalist put in it,
// hidden ones left out, and which are selected in a list box, each once;
// an option outside a select by its label, unless hidden), links with
// refs and targets,
// hidden text left out, the main content first.
func TestSnapshotFormat(t *testing.T) {
	t.Parallel()
	got := snapshotOf(t, snapshotPage)
	want := "# The `Client` type\n" +
		"A `Client` sends requests to a [server](e3 /server), and waits.\n" +
		"- one\n" +
		"  - one.a\n" +
		"- two\n" +
		"1. first\n" +
		"2. second\n" +
		"| Order | Total |\n" +
		"| A-1 | 12 EUR |\n" +
		"Left column\n" +
		"its second block\n" +
		"Right column\n" +
		"```\nfunc main() {\n\trun()\n}\n```\n" +
		"form \"Settings\":\n" +
		"Email [textbox e4 value=\"a@b.c\"] [checkbox e5 checked] Remember [combobox \"Size\" e6 value=\"M\" options: \"S\", \"M\"] [listbox \"Sizes\" e7 options: \"Small\", \"M\" (selected), \"L\" (selected)] " +
		"[combobox \"Colour\" e8 value=\"Blue\" options: \"Red\", \"Blue\"] [listbox \"Tags\" e9 options: \"new\" (selected), \"old\"] [button \"Save\" e10]\n" +
		"A stray option\n" +
		"![A diagram]\n" +
		"\n(outside the main content:)\n" +
		"navigation \"Sidebar\":\n" +
		"- [Intro](e1 /intro)\n" +
		"- [Reference](e2 /ref)\n" +
		"contentinfo:\n" +
		"Footer text"
	if got != want {
		t.Errorf("snapshot:\n%s\n\nwant:\n%s", got, want)
	}
}

// TestSnapshotNestedTables: a table inside a cell of another (two tables
// side by side in one row, as LWN lays out its statistics) keeps its
// rows: each inner table is rendered as a table of its own, where it
// stands, rather than its rows run together into the outer cell.
func TestSnapshotNestedTables(t *testing.T) {
	t.Parallel()
	got := snapshotOf(t, `<!doctype html><title>Stats</title><main>
<table>
<tr><th colspan=2>Most active developers</th></tr>
<tr><td><table><tr><th colspan=3>By changesets</th></tr><tr><td>Ada</td><td>63</td><td>16.6%</td></tr><tr><td>Bob</td><td>56</td><td>14.7%</td></tr></table></td>
<td><table><tr><th colspan=3>By changed lines</th></tr><tr><td>Bob</td><td>4554</td><td>88.1%</td></tr></table></td></tr>
<tr><td>Total</td><td>119 changesets</td></tr>
</table>
<table><tr><th>Plain</th><th>Row</th></tr><tr><td>x</td><td>y</td></tr></table>
</main>`)
	want := "| Most active developers |\n" +
		"| By changesets |\n" +
		"| Ada | 63 | 16.6% |\n" +
		"| Bob | 56 | 14.7% |\n" +
		"| By changed lines |\n" +
		"| Bob | 4554 | 88.1% |\n" +
		"| Total | 119 changesets |\n" +
		"| Plain | Row |\n" +
		"| x | y |"
	if got != want {
		t.Errorf("snapshot:\n%s\n\nwant:\n%s", got, want)
	}
}

// snapshotOf is the page content of a snapshot of page, served on
// loopback and navigated to in a session of its own.
func snapshotOf(t *testing.T, page string) string {
	t.Helper()
	h := newHarness(t, 50, false)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) })
	site := executor.ServeOn(t, "127.0.0.1:0", mux)
	if r := h.call(t, "s", "navigate", map[string]any{"url": site + "/page"}); r.IsError {
		t.Fatal(r.Text)
	}
	r := h.call(t, "s", "snapshot", nil)
	if r.IsError {
		t.Fatal(r.Text)
	}
	return testkit.PageContent(r.Text)
}

package executor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/toolclad"
)

// axReadPages are pages both reads are compared on: two long texts with
// few controls (the Go specification and memory model, which the element
// read is chosen for), a page of links and tables (a Wikipedia list),
// and a page of controls of every kind, with a same-process frame, a
// shadow root, labels, ARIA roles and states, and a layout table.
func axReadPages(t *testing.T) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{
		"controls": []byte(`<!doctype html><title>controls</title>
<header><nav aria-label="Site"><a href="/a">A</a> <a href="/b" aria-current="page">B</a></nav></header>
<main><h1>Form</h1>
<form aria-label="Order"><label for=n>Name</label> <input id=n required value="Ada">
<label><input type=checkbox checked> Gift</label>
<select aria-label="Size"><option>S<option selected>M</select>
<textarea placeholder="Notes"></textarea>
<div role=button tabindex=0 aria-expanded=false>More</div>
<span contenteditable>edit me</span>
<button disabled>Send</button></form>
<table><tr><td>layout</td><td>table</td></tr></table>
<table><caption>Data</caption><tr><th>k<th>v<tr><td>a<td>1</table>
<ul><li>one<li role=none>two</ul>
<div id=host></div><script>document.getElementById('host').attachShadow({mode:'open'}).innerHTML='<button>In shadow</button><p>shadow text</p>'</script>
<iframe srcdoc="<p>framed</p><a href='/c'>C</a><input aria-label=Inside>"></iframe>
<img src="data:," alt="a picture"><p hidden>hidden</p>
<x-btn>Custom</x-btn><x-list><x-li>ci1</x-li><x-li>ci2</x-li></x-list>
<script>
customElements.define('x-btn', class extends HTMLElement { constructor() { super(); this.attachInternals().role = 'button'; } });
customElements.define('x-list', class extends HTMLElement { constructor() { super(); this.attachInternals().role = 'list'; } });
customElements.define('x-li', class extends HTMLElement { constructor() { super(); this.attachInternals().role = 'listitem'; } });
</script>
<div style="display:list-item">css item</div>
<svg width=20 height=20><image href="data:," width=5 height=5><title>svg pic</title></image></svg>
<dir><li>old list</li></dir>
<table><thead><tr><td>layout head</td></tr></thead><tbody><tr><td><p>block in a cell</p>
<table><tr><th>inner<th>data<tr><td>x<td>y</table></td><td aria-label="named cell">z</td></tr></tbody></table>
<table role=presentation><tr><td>presentational</td></tr></table>
<table><tbody role=rowgroup><tr><td>own section</td></tr></tbody></table>
<table><tr><td hidden>gone</td><td style="visibility:hidden">unseen</td><td></td><td><div>block</div></td></tr></table>
<ul role=menu><li>in a menu</li></ul><ul role=tablist><li>in a tablist</li></ul><ol role=listbox><li>in a listbox</li></ol><ul role=tree><li>in a tree</li></ul>
<ul role=none><li>in no list</li></ul><nav><ul><li><a href="/n">nav item</a></li></ul></nav>
<a href="/h"><h2>heading in a link</h2></a><button><h3>heading in a button</h3></button><h4 aria-hidden=true>hidden heading</h4>
<div role=table><div role=row><span role=cell>aria cell</span></div></div>
<table><tr><td role=button tabindex=0>cell button</td><th scope=row>row head</th></tr></table>
<table><tbody inert><tr><td>inert a</td><td>inert b</td></tr></tbody></table>
<table><tbody aria-hidden=true><tr><td>hidden a</td><td>hidden b</td></tr></tbody></table>
<table><tr style="display:contents"><td>contents a</td><td>contents b</td></tr></table>
<table><tr style="visibility:hidden"><td style="visibility:visible">shown a</td><td style="visibility:visible">shown b</td></tr></table>
<ul><li inert>inert item</li></ul><h5 inert>inert heading</h5>
<p><a href="/plain">plain</a> <a href="rel/path?q=1#frag">relative</a> <a href="../up">up</a> <a href="?only=query">query</a>
<a href="#only-frag">fragment</a> <a href="">empty href</a> <a href="//Example.COM:80/x">protocol-relative</a>
<a href="HTTP://EXAMPLE.com">upper case</a> <a href="https://example.com:443">default port</a> <a href="http://example.com:8080/p">port</a>
<a href="http://example.com:080/p">zero port</a> <a href="mailto:ada@example.com">mail</a> <a href="javascript:void(0)">script</a>
<a href=" /spaced ">spaced</a> <a href="/a b">space inside</a> <a href="/caf%C3%A9">encoded</a> <a href="/café">unicode</a>
<a href="http://127.1/">short address</a> <a href="/x/%2e%2e/y">encoded dots</a> <a href="http:rel">scheme, no slashes</a>
<a href="/p#a#b">two hashes</a> <a href="/back\slash">backslash</a> <a href="http://user:pw@example.com/">user</a>
<a href="tel:+1-555-0100">phone</a> <a href="/a/./b/../c">dot segments</a> <a href="http://example.com./">trailing dot</a>
<a href="http://xn--caf-dma.com/">punycode</a> <a href="HTTPS://example.com/Path?Q=1">scheme case</a> <a href="/q?a='b'">quote</a>
<a href="/tab	bed">tab</a> <a href="ftp://example.com">ftp</a> <a href="data:text/plain,hi">data</a> <a href="foo:bar">other scheme</a>
<a href="http://0x7f.1/">hex address</a> <a href="http://[::1]/">ipv6</a></p>
<div aria-hidden=true><a href="/ah">under aria-hidden</a></div> <div inert><a href="/in">under inert</a></div>
<div role=button><a href="/rb">in a role button</a></div> <div role=img aria-label=pic><a href="/ri">in an image</a></div>
<button><a href="/ib">in a button</a></button> <details><summary>more</summary><a href="/d">in closed details</a></details>
<details open><summary>open</summary><a href="/do">in open details</a></details>
<div style="visibility:hidden"><a href="/vh">under visibility hidden</a></div>
<a href="/vv" style="visibility:hidden"><span style="visibility:visible">visible in a hidden link</span></a>
<a href="/empty"></a> <a href="/ws"> </a> <a href="/img"><img src="data:," alt="image link"></a>
<style>.icon::before { content: "\2605" } .pre::before { content: "go " }</style>
<a href="/icon" title="Icon title" class=icon></a> <a href="/pre" class=pre>before text</a>
<div style="content-visibility:hidden"><a href="/cvh">content hidden</a></div>
<div hidden=until-found><a href="/uf">until found</a></div>
<x-wrap><a href="/cw">in a custom element</a></x-wrap>
<div id=host2><a href="/slotted">slotted into a button</a></div>
<script>document.getElementById('host2').attachShadow({mode:'open'}).innerHTML='<button><slot></slot></button>'</script>
<svg width=60 height=20><a href="/svg"><text x=0 y=15>svg link</text></a></svg>
<a href="/dc" style="display:contents">contents link</a> <a href="/nested"><b>bold <i>and</i></b> text</a>
<a href="/blk"><div>block in a link</div></a> <a href="/tt" title="has a title">titled</a>
<a href="/hs" title="Hidden text's title"><span style="visibility:hidden">hidden text</span></a>
<a href="/pl" title="With a block">text <pre>code</pre></a> <a href="/rbtn" role=button>a link made a button</a>
<a href="/ahl" aria-hidden=true>a hidden link</a> <a href="/inl" inert>an inert link</a>
<details open><summary>sum <a href="/sum">in a summary</a></summary>x</details> <label>lab <a href="/lab">in a label</a> <input></label>
<object data="/nothing" type="application/x-nothing"><a href="/obj">in object fallback</a></object>
<svg width=100 height=30><foreignObject width=100 height=30><a href="/fo">in foreign content</a></foreignObject></svg>
<p id=outer-p><a id=outer href="/outer">outer</a></p>
<table><caption>links</caption><tr><th>head</th></tr><tr><td><a id=tda href="/tda" title="cell link">hi</a></td></tr></table>
<script>const cell = document.createElement('td'); cell.textContent = 'x'; document.getElementById('tda').appendChild(cell)</script>
<svg width=100 height=20><text x=0 y=15><a href="/svgt">svg text link</a></text></svg>
<a href="#">hash</a> <a href="/self#">empty fragment</a> <a href="..//x">double slash</a> <a href="/a/..//x">double slash after dots</a>
<a href="///x">three slashes</a> <a href="//">two slashes</a> <a href="http://a!b@example.com/">bang user</a> <a href="file:foo">file</a>
<a href="/cart" title="Cart"><i role="img">&#x1f6d2;</i></a> <a href="/star" title="Star"><span aria-label="star">*</span></a>
<div style="interactivity:inert"><a href="/ci">css inert</a></div>
<x-hid><a href="/xh">in a custom element hidden by its internals</a></x-hid>
<script>customElements.define('x-hid', class extends HTMLElement { constructor() { super(); this.attachInternals().ariaHidden = 'true'; } })</script>
<iframe inert srcdoc="<a href='/fx'>in an inert frame</a>"></iframe>
<select multiple style="appearance:base-select"><option><a href="/opt">in an option</a></option></select>
<select multiple aria-label="Sizes"><optgroup label="Small"><option selected>XS<option>S</optgroup><option disabled>M</select>
<select size=3><option>one<option selected>two</select> <input list=dl><datalist id=dl><option value="listed"></datalist>
<option>stray option</option>
<a href="chrome:settings">chrome</a> <a href="devtools:x">devtools</a> <a href="filesystem:x">filesystem</a> <a href="sms:+1555">sms</a>
<p id=ns></p><script>const nsA = document.createElementNS('urn:x', 'a'); nsA.setAttribute('href', '/ns'); nsA.textContent = 'another namespace'; document.getElementById('ns').appendChild(nsA)</script>
<a href="http://0x7f/">hex host</a> <a href="http://127.0.0.0x1/admin">hex last label</a> <a href="/r?u=https://example.com/x">redirect link</a>
<a id=long>long target</a><script>document.getElementById('long').href = '/' + 'x'.repeat(12000)</script>
<iframe src="data:text/html,<a href='/from-data'>from data</a> <a href='rel-data'>relative in data</a>"></iframe>
<script>const inner = document.createElement('a'); inner.href = '/inner'; inner.textContent = 'inner'; document.getElementById('outer').appendChild(inner)</script>
<div role=tab><a href="/tb">in a tab</a></div> <div role=checkbox><a href="/cb">in a checkbox</a></div>
<a href="/hid" hidden>hidden link</a> <a href="/sty" style="display:none">undisplayed</a>
<div role=none><a href="/rn">under role none</a></div>
<table><caption>data, inert section</caption><tbody inert><tr><td>di a</td><td>di b</td></tr></tbody></table>
<table><caption>data, hidden section</caption><tbody aria-hidden=true><tr><td>dh a</td></tr></tbody></table>
<table><caption>data, contents row</caption><tr style="display:contents"><td>dc a</td><td>dc b</td></tr></table>
<table><caption>data, hidden row</caption><tr style="visibility:hidden"><td style="visibility:visible">dr a</td></tr><tr style="visibility:collapse"><td>collapsed</td></tr></table>
<table style="visibility:hidden"><caption>hidden data</caption><tr><td style="visibility:visible">hd a</td></tr></table>
<table><caption>data, blocks</caption><tr style="display:block"><td>block row</td></tr><tr><td style="display:block">block cell</td><td>plain cell</td></tr></table>
<table style="display:block"><caption>block table</caption><tr><th>bt h</th><td>bt d</td></tr></table>
<table style="display:inline-table"><caption>inline table</caption><tr><td>it d</td></tr></table>
<table><caption>sections</caption><thead><tr><th>th a</th></tr></thead><tbody role=presentation><tr><td>presented body</td></tr></tbody><tfoot><tr><td>foot cell</td></tr></tfoot></table>
<table><caption>attributes</caption><tr aria-hidden=true><td>hidden row cell</td></tr><tr inert><td>inert row cell</td></tr><tr><td aria-hidden=true>hidden cell</td><td inert>inert cell</td><td style="interactivity:inert">css inert cell</td></tr></table>
<div aria-hidden=true><table><caption>under aria-hidden</caption><tr><td>uh</td></tr></table></div>
<x-tbl><table><caption>in a custom element</caption><tr><td>ic</td></tr></table></x-tbl>
<table id=built><caption>built</caption></table>
<script>{const t = document.getElementById('built'), r = document.createElement('tr'); r.innerHTML = '<td>built cell</td>'; t.appendChild(r);
const loose = document.createElement('tr'); loose.innerHTML = '<td>loose cell</td>'; t.after(loose); const lc = document.createElement('td'); lc.textContent = 'loose td'; t.after(lc)}</script>
<table role=grid><tr><td>grid cell</td></tr></table> <table role=presentation><caption>presentational data</caption><tr><th>ph</th><td>pd</td></tr></table>
<table><caption>nested</caption><tr><td><table><tr><td>inner layout</td></tr></table></td><td>beside</td></tr></table>
<table><caption>headers</caption><tr><th>col a</th><th>col b</th></tr><tr><th scope=row>row h</th><td>v</td></tr></table>
<div style="content-visibility:hidden"><table><caption>content hidden</caption><tr><td>ch</td></tr></table></div></main>
<footer>foot</footer>`),
		// More tables: nested, displayed otherwise, presentational, with
		// ARIA on the table, in foreign content, deferred, in controls and
		// links, slotted, moved by script.
		"tables-more": []byte(`<!doctype html><title>tables more</title>
<table><tr><td><table><caption>d</caption><tr><th>h</th><td>x</td></tr></table></td><td>side</td></tr></table>
<table><caption>d</caption><tr><th>h</th><td><table><tr><td>inner</td><td>i2</td></tr></table></td></tr></table>
<table><caption>d</caption><tbody style="display:table"><tr><td>a</td><td>b</td></tr></tbody></table>
<table><caption>d</caption><tbody style="display:contents"><tr><td>a</td><td>b</td></tr></tbody></table>
<table><caption>d</caption><tr style="display:table"><td>a</td><td>b</td></tr></table>
<table style="display:grid"><caption>c</caption><tr><th>h</th><td>d</td></tr><tr><td>a</td><td>b</td></tr></table><table style="display:grid"><tr><td>l1</td><td>l2</td></tr></table>
<table style="display:contents"><caption>c</caption><tr><th>h</th><td>d</td></tr><tr><td>a</td><td>b</td></tr></table><table style="display:contents"><tr><td>l1</td><td>l2</td></tr></table>
<table style="display:flex"><caption>c</caption><tr><th>h</th><td>d</td></tr><tr><td>a</td><td>b</td></tr></table><table style="display:flex"><tr><td>l1</td><td>l2</td></tr></table>
<table role=presentation><tr><th>h</th><td>d</td></tr></table><table role=none><caption>c</caption><tr><td>x</td></tr></table><table role=presentation tabindex=0><tr><th>h</th><td>d</td></tr></table><table role=none aria-label=x><tr><td>x</td></tr></table>
<table aria-label=x><tr><td>a</td><td>b</td></tr></table><table aria-rowcount=5><tr><td>a</td></tr></table><table aria-hidden=true><caption>c</caption><tr><td>a</td></tr></table><table aria-describedby=z><tr><td>a</td></tr></table><p id=z>z</p><table role=table><tr><td>a</td></tr></table><table role=treegrid><tr><td>a</td></tr></table><table role=grid aria-readonly=true><tr><td>a</td></tr></table>
<svg width=300 height=100><foreignObject width=300 height=100><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table><table><tr><td>l</td></tr></table></foreignObject></svg>
<div hidden=until-found><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table></div><table hidden=until-found><caption>c</caption><tr><td>x</td></tr></table>
<div style="content-visibility:auto"><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table></div><div style="height:5000px"></div><div style="content-visibility:auto"><table><caption>far</caption><tr><th>h</th><td>x</td></tr></table></div><table style="content-visibility:hidden"><caption>c</caption><tr><td>x</td></tr></table><table><caption>c</caption><tr style="content-visibility:hidden"><td>x</td></tr></table>
<details><summary>s</summary><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table></details><details open><summary>s</summary><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table></details>
<table><caption>c</caption><colgroup><col span=2></colgroup><col><tr><th colspan=2>h</th><td rowspan=2>x</td></tr><tr><td>a</td><td>b</td></tr></table><table><colgroup><col></colgroup><tr><td colspan=2>l</td></tr></table>
<select style="appearance:base-select"><option><table><caption>c</caption><tr><td>x</td></tr></table></option></select><script>{const o=document.createElement("option");o.innerHTML="<table><caption>c</caption><tr><th>h</th><td>x</td></tr></table>";document.querySelector("select").append(o)}</script><select multiple><option>a</option></select><script>{const t=document.createElement("table");t.innerHTML="<caption>c</caption><tr><th>h</th><td>x</td></tr>";document.querySelectorAll("select")[1].append(t)}</script>
<button><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table></button><label><table><caption>c</caption><tr><td>x</td></tr></table><input></label><a href="/t"><table><caption>c</caption><tr><th>h</th><td>x</td></tr></table></a><a href="/t2"><table><tr><td>lay</td></tr></table></a>
<table><tr><th scope=col id=h1>a</th><th scope=colgroup>b</th></tr><tr><td headers=h1>1</td><th scope=rowgroup>r</th></tr></table><table><tr><td>only</td><th>late</th></tr></table>
<x-t><table><caption>c</caption><tr><td>x</td></tr></table></x-t><x-g><table><tr><td>y</td></tr></table></x-g><script>{customElements.define("x-t",class extends HTMLElement{constructor(){super();this.attachInternals().ariaHidden="true"}});customElements.define("x-g",class extends HTMLElement{constructor(){super();this.attachInternals().role="table"}})}</script>
<iframe srcdoc="<table><caption>c</caption><tr><th>h</th><td>x</td></tr></table><table><tr><td>l</td></tr></table>"></iframe><table><caption>top</caption><tr><td>y</td></tr></table>
<div id=h></div><div id=h2><tr id=slotrow><td>slotted cell</td></tr></div><script>{
const r=document.getElementById("h").attachShadow({mode:"open"});r.innerHTML="<table><caption>c</caption><tr><th>h</th><td>x</td></tr></table><table><tr><td>l</td></tr></table>";
const r2=document.getElementById("h2").attachShadow({mode:"closed"});const t=document.createElement("table");const tb=document.createElement("tbody");const s=document.createElement("slot");tb.append(s);t.append(tb);r2.append(t);
const h2=document.getElementById("h2");const tr=document.createElement("tr");tr.innerHTML="<td>slotted tr</td><td>b</td>";h2.append(tr);}</script>
<div id=h2></div><script>{
const h2=document.getElementById("h2");const r2=h2.attachShadow({mode:"open"});const t=document.createElement("table");t.createCaption().textContent="cap";const tb=document.createElement("tbody");const tr0=document.createElement("tr");const s=document.createElement("slot");tr0.append(s);tb.append(tr0);t.append(tb);r2.append(t);
const td=document.createElement("td");td.textContent="slotted td";h2.append(td);
const tbl=document.createElement("table");tbl.innerHTML="<tr><td>light layout</td></tr>";h2.append(tbl);}</script>
<table id=a><tr><td>l1</td><td>l2</td></tr></table><table id=b><caption>c</caption><tr><th>h</th></tr></table><script>{document.getElementById("b").tBodies[0].append(document.getElementById("a").rows[0])}</script>
`),
		// A modal dialog makes the rest of the page inert.
		"modal": []byte(`<!doctype html><title>modal</title><base href="/base/">
<p><a href="/outside">outside the dialog</a> <a href="rel">relative</a></p>
<table><caption>outside</caption><tr><td>inert cell</td></tr></table>
<dialog id=d><a href="/inside">inside the dialog</a> <a href="rel2">relative inside</a></dialog>
<script>document.getElementById('d').showModal()</script>`),
		// aria-owns can move a link under an element that hides it.
		"aria-owns": []byte(`<!doctype html><title>aria owns</title>
<p><a href="/free">not owned</a></p><div aria-hidden=true aria-owns=owned></div><a id=owned href="/owned">owned by a hidden element</a>
<table><caption>owned</caption><tr id=or><td>owned row</td></tr><tr><td>kept row</td></tr></table><div aria-owns=or></div>`),
		// So does a modal dialog whose open attribute is taken away.
		"modal-no-open": []byte(`<!doctype html><title>modal without open</title>
<p><a href="/outside">outside the dialog</a></p><dialog id=d><a href="/inside">inside the dialog</a></dialog>
<script>const d = document.getElementById('d'); d.showModal(); d.removeAttribute('open')</script>`),
		// And a fullscreen element (made so by the test).
		"fullscreen": []byte(`<!doctype html><title>fullscreen</title>
<p><a href="/outside">outside the fullscreen element</a></p><div id=fs><a href="/inside">inside it</a></div>`),
		// A modal dialog in a closed shadow root, which the count cannot
		// see, with no layout.
		"shadow-modal": []byte(`<!doctype html><title>modal in a shadow root</title>
<p><a href="/outside">outside the dialog</a></p><div id=host></div>
<script>const root = document.getElementById('host').attachShadow({mode: 'closed'});
root.innerHTML = '<dialog style="display:none"><a href="/inside">inside</a></dialog>'; root.querySelector('dialog').showModal()</script>`),
		// An open popover is in the top layer too.
		"popover": []byte(`<!doctype html><title>popover</title>
<p><a href="/outside">outside the popover</a></p><div id=po popover><a href="/inside">in the popover</a></div>
<script>document.getElementById('po').showPopover()</script>`),
		// A base the browser cannot parse (its links have no target), and
		// one with a user, which Go writes otherwise.
		"bad-base": []byte(`<!doctype html><title>bad base</title><base href="http://[bad/">
<p><a href="/a">absolute path</a> <a href="rel">relative</a> <a href="#f">fragment</a></p>`),
		"user-base": []byte(`<!doctype html><title>user base</title><base href="http://a!b@example.com/dir/">
<p><a href="/a">absolute path</a> <a href="rel">relative</a> <a href="#f">fragment</a></p>`),
		// A base Go cannot parse (the browser keeps %zz as it is), and one
		// with a fragment, which resolution leaves out.
		"escape-base": []byte(`<!doctype html><title>escape base</title><base href="/a%zz/">
<p><a href="/a">absolute path</a> <a href="rel">relative</a> <a href="#f">fragment</a></p>`),
		"fragment-base": []byte(`<!doctype html><title>fragment base</title><base href="/dir/page?q#top">
<p><a href="/a">absolute path</a> <a href="rel">relative</a> <a href="#f">fragment</a> <a href="">this page</a> <a href="?r">query</a></p>`),
		// Served at a URL with an empty query: fragments keep the ?.
		"empty-query": []byte(`<!doctype html><title>empty query</title>
<p><a href="#intro">Intro</a> <a href="">this page</a> <a href="?q=1">a query</a> <a href="next">next</a></p><h2 id=intro>Intro</h2>`),
		// An element the page marks aria-modal does too.
		"aria-modal": []byte(`<!doctype html><title>aria modal</title>
<p><a href="/outside">outside the dialog</a></p>
<table><caption>outside</caption><tr><td>a cell</td></tr></table>
<div role=dialog aria-modal=true><a href="/inside">inside the dialog</a></div>`),
	}
	for name, path := range map[string]string{
		"go-spec":   filepath.Join("..", "cmd", "peerbench", "testdata", "docs", "go-spec.html"),
		"go-memory": filepath.Join("..", "cmd", "browsergate", "testdata", "docs", "go-memory-model.html"),
		"films":     filepath.Join("..", "cmd", "browsergate", "testdata", "docs", "wikipedia-time-loops.html"),
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = b
	}
	return pages
}

// TestElementReadRendersAsWholeTree: reading the tree's nodes of the
// elements a snapshot asks about renders every page exactly as reading
// the whole tree does; and the choice between them goes to the element
// read on a long text with few controls, to the whole tree on a page of
// links and on a short page. Where the element read gives an element no
// node, the renderer renders it by its tag as the whole tree's role would.
func TestElementReadRendersAsWholeTree(t *testing.T) {
	t.Parallel()
	chosen := map[string]bool{"go-spec": true, "go-memory": true, "films": true, "controls": false, "modal": false, "aria-modal": false, "aria-owns": false,
		"modal-no-open": false, "fullscreen": false, "tables-more": false,
		"shadow-modal": false, "popover": false, "bad-base": false, "user-base": false, "empty-query": false,
		"escape-base": false, "fragment-base": false}
	// The plain links each page has at the least: the element read asks
	// about none of them, and still renders as the whole tree.
	plainAtLeast := map[string]int{"go-spec": 700, "go-memory": 10, "films": 300, "controls": 15, "empty-query": 2, "fragment-base": 5}
	// The rows and cells of tables of data each page has at the least:
	// the element read asks about none of them (snapshot/tableparts.go).
	partsAtLeast := map[string]int{"films": 300, "controls": 35}
	// The pages whose count already says there can be no plain links (the
	// element read still checks: topLayer, snapshot.PlainLinks).
	countSees := map[string]bool{"modal": true, "aria-modal": true, "aria-owns": true, "modal-no-open": true, "fullscreen": true}
	for name, page := range axReadPages(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rig := newBenchRig(t, page)
			e := rig.newExecutor()
			defer e.Close()
			u := rig.url
			if name == "empty-query" {
				u += "?" // a page URL with an empty query, which Go would lose
			}
			rig.call(t, e, "s", "navigate", map[string]any{"url": u})
			s, err := e.session(&toolclad.Call{SessionID: "s", Manifest: rig.m})
			if err != nil {
				t.Fatal(err)
			}
			ctx := s.tab.ctx
			if name == "fullscreen" {
				gesture := true
				if _, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: `document.getElementById('fs').requestFullscreen()`,
					UserGesture: &gesture, AwaitPromise: &gesture}); err != nil {
					t.Fatal(err)
				}
			}
			elementRead, derive := s.chooseRead(ctx)
			if elementRead != chosen[name] {
				t.Errorf("the element read is chosen: %v, want %v", elementRead, chosen[name])
			}
			if derive == countSees[name] {
				t.Errorf("the count says plain links are to be looked for: %v, want %v", derive, !countSees[name])
			}
			render := func(layout domsnapshot.CaptureSnapshotResult, ax map[cdp.BackendNodeID]*snapshot.AXNode, err error) (string, int) {
				if err != nil {
					t.Fatal(err)
				}
				page, err := snapshot.Render(&snapshot.Capture{Layout: &layout, AX: ax}, snapshot.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return page.Text, len(ax)
			}
			whole, nWhole := render(s.readWholeTree(ctx))
			byElement, nElem := render(readByElements(ctx, derive))
			// Every element the whole tree gives a role the renderer tells
			// apart has it in the element read, or none where its tag
			// renders it alike; and the element read gives no element a
			// role the whole tree does not.
			{
				layout, whole, err := s.readWholeTree(ctx)
				if err != nil {
					t.Fatal(err)
				}
				_, elems, err := readByElements(ctx, derive)
				if err != nil {
					t.Fatal(err)
				}
				tags := map[cdp.BackendNodeID]string{}
				for _, d := range layout.Documents {
					for i, id := range d.Nodes.BackendNodeID {
						tags[id] = strings.ToLower(snapshot.StringAt(layout.Strings, d.Nodes.NodeName[i]))
					}
				}
				role := func(ax map[cdp.BackendNodeID]*snapshot.AXNode, id cdp.BackendNodeID) string {
					if info := ax[id]; info != nil {
						return info.Role
					}
					return ""
				}
				ids := map[cdp.BackendNodeID]bool{}
				for id := range whole {
					ids[id] = true
				}
				for id := range elems {
					ids[id] = true
				}
				parts := 0 // rows and cells the element read gives no node
				for id := range ids {
					w, e := role(whole, id), role(elems, id)
					if t := tags[id]; (t == "tr" || t == "td" || t == "th") && w != "" && e == "" {
						parts++
					}
					switch {
					case w == e, !snapshot.RoleToldApart(w) && !snapshot.RoleToldApart(e):
					case e == "" && rendersByTag(tags[id], w):
					default:
						t.Errorf("<%s> node %d has the role %q in the whole tree, %q in the element read", tags[id], id, w, e)
					}
				}
				if parts < partsAtLeast[name] {
					t.Errorf("the element read gives %d rows and cells of tables of data no node, want at least %d", parts, partsAtLeast[name])
				}
			}
			{
				// The element read alone finds no plain link, and no row or
				// cell sitting plainly in a table, where the page may be
				// inert or rearranged, whatever the count said.
				layout, err := readLayout(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n, parts := 0, 0
				if !topLayer(ctx) {
					n, parts = len(snapshot.PlainLinks(&layout)), len(snapshot.TableParts(&layout))
				}
				if n < plainAtLeast[name] || plainAtLeast[name] == 0 && n > 0 {
					t.Errorf("%d plain links, want at least %d", n, plainAtLeast[name])
				}
				if countSees[name] && parts > 0 {
					t.Errorf("%d rows and cells sit plainly in a table on a page that may be inert or rearranged", parts)
				}
			}
			if plainAtLeast[name] > 0 && (nElem == 0 || nElem >= nWhole) {
				t.Errorf("the element read has %d nodes of the tree, the whole tree %d: it read nothing, or everything", nElem, nWhole)
			}
			if whole != byElement {
				wl, el := strings.Split(whole, "\n"), strings.Split(byElement, "\n")
				for i := range min(len(wl), len(el)) {
					if wl[i] != el[i] {
						t.Fatalf("the reads render differently, first at line %d:\nwhole tree: %s\nelements:   %s", i+1, wl[i], el[i])
					}
				}
				t.Fatalf("the reads render differently: %d lines from the whole tree, %d from the elements", len(wl), len(el))
			}
			// And through the whole call, which makes the choice.
			rig.call(t, e, "s", "snapshot", map[string]any{"max_chars": int64(1000000)})
			if name == "controls" {
				for _, want := range []string{`[checkbox e4 checked] Gift`, `[button "More"`, "In shadow", "framed", `[textbox "Inside"`, `[combobox "Size"`,
					`[button "Custom"`, "- ci1", "- css item", "svg pic", "- old list"} {
					if !strings.Contains(whole, want) {
						t.Errorf("the snapshot lacks %q:\n%s", want, whole)
					}
				}
			}
		})
	}
}

// rendersByTag: the renderer (package snapshot) renders an element of tag
// with no node of the tree as it renders one of role.
func rendersByTag(tag, role string) bool {
	switch tag {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		return role == "heading"
	case "ul", "ol", "menu":
		return role == "list"
	case "li":
		return role == "listitem"
	case "option":
		return role == "option"
	case "tr":
		return role == "row"
	case "td", "th":
		return role == "cell" || role == "columnheader" || role == "rowheader" || role == "gridcell"
	}
	return false
}

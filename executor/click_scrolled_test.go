package executor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor"
)

// scrolledPage is a page taller than the viewport with buttons at several
// depths (each adds its name to #log when clicked), one of them under a
// transparent overlay, and a menu deep down that opens on hover.
const scrolledPage = `<!doctype html><title>tall</title>
<p id=log>clicked:</p>
<script>function hit(n) { document.getElementById('log').textContent += ' ' + n }</script>
<div style="height: 400px"></div><button id=b400 onclick="hit('b400')">b400</button>
<div style="height: 800px"></div><button id=b1200 onclick="hit('b1200')">b1200</button>
<div style="height: 400px"></div>
<div style="position: relative"><button id=under onclick="hit('under')">under</button>
<div style="position: absolute; inset: -20px; background: transparent"></div></div>
<div style="height: 1200px"></div><button id=b2800 onclick="hit('b2800')">b2800</button>
<div id=menu style="margin-top: 600px" onmouseenter="hit('menu')">menu</div>
<div style="height: 2000px"></div>`

// TestClickOnAScrolledPage: on a page scrolled away from its top, click
// reaches each element, above the viewport, in it and below it, and hover
// reaches a menu deep down: the hit check looks where the pointer goes,
// whatever the scroll. An element under an overlay is still refused as
// covered on the scrolled page.
func TestClickOnAScrolledPage(t *testing.T) {
	t.Parallel()
	h := newHarnessFrom(t, fmt.Sprintf(loopManifest, false, 100)+"[browser.commands.hover]\n")
	site := executor.ServeOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(scrolledPage))
	}))
	h.call(t, "s", "navigate", map[string]any{"url": site + "/"})
	for _, step := range []struct {
		command string
		args    map[string]any
	}{
		{"scroll", map[string]any{"direction": "down"}},
		{"click", map[string]any{"selector": "#b1200"}},
		{"click", map[string]any{"selector": "#b400"}},
		{"click", map[string]any{"selector": "#b2800"}},
		{"hover", map[string]any{"selector": "#menu"}},
		{"click", map[string]any{"selector": "#b1200"}},
	} {
		if r := h.call(t, "s", step.command, step.args); r.IsError {
			t.Fatalf("%s %v on the scrolled page refused: %s", step.command, step.args, r.Text)
		}
	}
	if r := h.call(t, "s", "click", map[string]any{"selector": "#under"}); !r.IsError || !strings.Contains(r.Text, "covered") {
		t.Errorf("click on a button under an overlay, on a scrolled page: %+v", r)
	}
	r := h.call(t, "s", "extract_html", map[string]any{"selector": "#log"})
	if !strings.Contains(r.Text, "clicked: b1200 b400 b2800 menu b1200<") {
		t.Errorf("the page saw other clicks than those made: %s", r.Text)
	}
}

// subPixelPage has a button at a fractional position with a box of the
// page's own, smaller than a pixel, laid in the same grid cell just past
// the button's centre: a pointer sent to the centre's fraction of a pixel
// would land on the box, which the check at the whole pixel below it does
// not see. The second button has such a box at the whole pixel the
// pointer is sent to: the check must see it there.
const subPixelPage = `<!doctype html><body style="margin:0">
<p id=log>clicked:</p>
<script>function hit(n) { document.getElementById('log').textContent += ' ' + n }</script>
<div style="height:1500px"></div>
<div style="position:absolute; left:100.4px; top:1500.4px; display:grid">
<button id=b style="grid-area:1/1; width:41px; height:21px; padding:0; border:0; margin:0" onclick="hit('button')">b</button>
<div style="grid-area:1/1; margin-left:20.7px; margin-top:10.7px; width:0.9px; height:0.9px; align-self:start; justify-self:start" onclick="hit('box')"></div>
</div>
<div style="position:absolute; left:300.4px; top:1500.4px; display:grid">
<button id=c style="grid-area:1/1; width:41px; height:21px; padding:0; border:0; margin:0" onclick="hit('second button')">c</button>
<div style="grid-area:1/1; margin-left:19.2px; margin-top:9.2px; width:1.2px; height:1.2px; align-self:start; justify-self:start" onclick="hit('second box')"></div>
</div>
<div style="height:3000px"></div>`

// TestClickLandsWhereItWasChecked: the pointer goes to the very point the
// hit check tested, so a box of the page's own a fraction of a pixel from
// the element's centre never takes a click the check gave to the element:
// each click reaches its button, or is refused as covered; no box is ever
// clicked.
func TestClickLandsWhereItWasChecked(t *testing.T) {
	t.Parallel()
	h := newHarnessFrom(t, fmt.Sprintf(loopManifest, false, 100))
	site := executor.ServeOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(subPixelPage))
	}))
	h.call(t, "s", "navigate", map[string]any{"url": site + "/"})
	clicked := 0
	for _, sel := range []string{"#b", "#c", "#b", "#c"} {
		r := h.call(t, "s", "click", map[string]any{"selector": sel})
		switch {
		case !r.IsError:
			clicked++
		case !strings.Contains(r.Text, "covered"):
			t.Errorf("click %s refused for another reason than a cover: %s", sel, r.Text)
		}
	}
	r := h.call(t, "s", "extract_html", map[string]any{"selector": "#log"})
	if strings.Contains(r.Text, "box") {
		t.Errorf("a click went to the page's box, not to the element checked: %s", r.Text)
	}
	if strings.Count(r.Text, "button") != clicked {
		t.Errorf("%d clicks were allowed, but the page logged %s", clicked, r.Text)
	}
	if clicked == 0 {
		t.Error("no click reached a button: the boxes should not cover the whole pixel each button's is checked at")
	}
}

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

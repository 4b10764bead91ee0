package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// surfaceInputPage is the richer input's page of the command-surface
// suite: a button that logs its clicks, double clicks, context menu and
// the modifier keys held, a form of two text fields, a select and two
// checkboxes (one checked), and a card to drag into a bin (HTML drag and
// drop).
const surfaceInputPage = `<!doctype html><title>Input</title>
<button id=b>Press</button><p id=log>log:</p>
<input id=first aria-label=First oninput="say('first ' + this.value)"><input id=last aria-label=Last oninput="say('last ' + this.value)">
<select id=plan aria-label=Plan onchange="say('plan ' + this.value)"><option value=free>Free</option><option value=pro>Pro</option></select>
<input type=checkbox id=terms aria-label=Terms onchange="say('terms ' + this.checked)"><input type=checkbox id=news aria-label=News checked onclick="say('news clicked')">
<input type=file id=docs multiple aria-label=Documents onchange="say('files ' + [...this.files].map(f => f.name + ':' + f.size).join(','))">
<div id=card draggable=true ondragstart="event.dataTransfer.setData('text/plain', 'card-1')" style="width:80px;height:40px">Card</div>
<div id=bin ondragover="event.preventDefault()" ondrop="event.preventDefault(); say('dropped ' + event.dataTransfer.getData('text/plain'))" style="width:200px;height:80px">Bin</div>
<script>
const b = document.getElementById('b'), say = s => document.getElementById('log').textContent += ' ' + s;
b.addEventListener('click', e => say('click' + e.detail + (e.ctrlKey ? '+ctrl' : '')));
b.addEventListener('dblclick', () => say('dbl'));
b.addEventListener('contextmenu', e => { e.preventDefault(); say('menu') });
</script>`

// surfaceInput serves the richer input's pages on the suite's site.
func surfaceInput(mux *http.ServeMux) {
	mux.HandleFunc("/input", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, surfaceInputPage)
	})
}

// runInput is the suite's step for the richer input (#37 item 4): click's
// button, click_count and modifiers; drag; fill_form (text, a select's
// option and checkboxes); upload_file's files.
func (s *surface) runInput(t *testing.T) {
	s.allow(t, "navigate", map[string]any{"url": s.site + "/input"}, `title="Input"`)
	s.allow(t, "click", map[string]any{"selector": "#b", "click_count": 2}, "double-clicked")
	s.allow(t, "click", map[string]any{"selector": "#b", "button": "right"}, "right-clicked")
	ctrl := " click1+ctrl"
	if s.live {
		// In the user's own context a click that may open a tab the
		// browser makes is refused, whatever the element.
		s.f.mustRefuse(t, s.tool+".click", map[string]any{"selector": "#b", "modifiers": "Control"}, "may open a tab the browser makes itself", "user's own browser context")
		ctrl = ""
	} else {
		s.allow(t, "click", map[string]any{"selector": "#b", "modifiers": "Control"}, "Control+clicked")
	}
	s.allow(t, "drag", map[string]any{"from": "#card", "to": "#bin"}, "with HTML drag and drop")
	s.allow(t, "fill_form", map[string]any{"fields": []any{
		map[string]any{"selector": "#first", "text": "Ada"}, map[string]any{"selector": "#last", "text": "Lovelace"},
		map[string]any{"selector": "#plan", "value": "Pro"}, map[string]any{"selector": "#terms", "checked": true},
		map[string]any{"selector": "#news", "checked": true}, // checked already: not clicked
	}}, "filled 5 fields")
	if out := s.approved(t, "upload_file", map[string]any{"selector": "#docs", "files": []any{"report.txt", "report.txt"}}, ""); !strings.Contains(out, "attached report.txt") {
		t.Errorf("upload_file with files:\n%s", out)
	}
	n := len(surfaceUpload)
	s.allow(t, "extract_html", map[string]any{"selector": "#log"}, fmt.Sprintf("log: click1 click2 dbl menu%s dropped card-1 first Ada last Lovelace plan pro terms true files report.txt:%d,report.txt:%d", ctrl, n, n))
}

package main

import (
	"fmt"
	"strings"
	"testing"
)

// fillFormPage is a sign-up form with a text field, a select, two
// checkboxes (one checked), a pair of radio buttons, an ARIA checkbox and
// an ARIA listbox: #seen shows the
// form's state on every input and change, #clicks the clicks on the
// checkboxes and radios.
const fillFormPage = `<title>signup</title>
<input id=who aria-label=Name>
<select id=plan aria-label=Plan><option value=free>Free</option><option value=pro>Pro plan</option></select>
<input id=terms type=checkbox aria-label=Terms>
<input id=news type=checkbox aria-label=News checked>
<input type=radio name=size id=small value=s aria-label=Small checked><input type=radio name=size id=large value=l aria-label=Large>
<div id=dark role=checkbox aria-checked=false aria-label=Dark tabindex=0 onclick="this.setAttribute('aria-checked', this.getAttribute('aria-checked') !== 'true')">Dark</div>
<ul role=listbox id=color aria-label=Color><li role=option onclick="$('picked').textContent = 'picked red'">Red</li><li role=option>Green</li></ul>
<p id=seen>untouched</p><p id=clicks>clicks:</p><p id=picked>no color</p>
<script>
const $ = id => document.getElementById(id);
const show = () => $('seen').textContent = 'name=' + $('who').value + ' plan=' + $('plan').value + ' terms=' + $('terms').checked +
  ' news=' + $('news').checked + ' size=' + document.querySelector('[name=size]:checked').value;
for (const el of document.querySelectorAll('input, select')) { el.addEventListener('input', show); el.addEventListener('change', show) }
for (const el of document.querySelectorAll('[type=checkbox], [type=radio]')) el.addEventListener('click', () => $('clicks').textContent += ' ' + el.id);
</script>`

// TestFillFormSelectsAndChecks: one fill_form call types into a text
// field, chooses a select's option (by its label, and in another call by
// its value) and an ARIA listbox's, checks a checkbox, a radio button and
// an ARIA checkbox, all read back from the page; a checkbox already in the state asked is not clicked. A radio
// button cannot be unchecked. A field whose option change or checkbox click
// a page handler turns into a navigation to the canary is refused, and
// the canary sees nothing; so is a batch with such a field after a text
// field, whose text the page then keeps but whose navigation never leaves.
func TestFillFormSelectsAndChecks(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest("[browser.commands.fill_form]\n[browser.commands.extract_html]\n"))
	site, _ := serveLogged(t, map[string]string{
		"/signup": fillFormPage,
		"/jump": fmt.Sprintf(`<title>jump</title><input id=who aria-label=Name>
<select id=j aria-label=Jump onchange="location=this.value"><option value="/">Home</option><option value="%s/jumped">Away</option></select>`, f.canaryTo),
		"/trap": fmt.Sprintf(`<title>trap</title><input id=who aria-label=Name>
<input id=agree type=checkbox aria-label=Agree onclick="location='%s/agreed?' + this.checked">`, f.canaryTo),
	})
	read := func(sel string) string {
		return f.mustAllow(t, "e2e.extract_html", map[string]any{"selector": sel})
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/signup"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	plan := findRef(snap, "Plan")
	if plan == "" {
		t.Fatalf("no ref for the Plan select:\n%s", snap)
	}
	out := f.mustAllow(t, "e2e.fill_form", map[string]any{"fields": []any{
		map[string]any{"selector": "#who", "text": "Ada"},
		map[string]any{"ref": plan, "value": "Pro plan"},
		map[string]any{"selector": "#terms", "checked": true},
		map[string]any{"selector": "#news", "checked": true},
		map[string]any{"selector": "#large", "checked": true},
		map[string]any{"selector": "#dark", "checked": true},
		map[string]any{"selector": "#color", "value": "Red"},
	}})
	if s := read("#seen"); !strings.Contains(s, "name=Ada plan=pro terms=true news=true size=l") || !strings.Contains(out, "filled 7 fields") {
		t.Errorf("fill_form (%s): the page shows %s", out, s)
	}
	if d, p := read("#dark"), read("#picked"); !strings.Contains(d, `aria-checked="true"`) || !strings.Contains(p, "picked red") {
		t.Errorf("the ARIA checkbox (%s) or the listbox's option (%s) was not set", d, p)
	}
	if c := read("#clicks"); !strings.Contains(c, "clicks: terms large") || strings.Contains(c, "news") {
		t.Errorf("the clicks were %q, want terms and large only (news was checked already)", c)
	}
	if !strings.Contains(out, "was already checked") {
		t.Errorf("the reply does not say the checked box was left alone:\n%s", out)
	}

	out = f.mustAllow(t, "e2e.fill_form", map[string]any{"fields": []any{
		map[string]any{"selector": "#plan", "value": "free"},
		map[string]any{"selector": "#terms", "checked": false},
		map[string]any{"selector": "#news", "checked": false},
	}})
	if s := read("#seen"); !strings.Contains(s, "plan=free terms=false news=false size=l") {
		t.Errorf("fill_form by value and unchecking (%s): the page shows %s", out, s)
	}
	f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#large", "checked": false}}}, "field 1", "radio button")
	f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#seen", "checked": true}}}, "field 1", "not a checkbox")
	f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#plan", "value": "gold"}}}, "field 1", `"Pro plan" (value "pro")`)
	f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#who", "text": "x", "checked": true}}}, "fields[0]", "exactly one of text, value, checked")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/jump"})
	t.Logf("a select whose change handler leaves the scope:\n%s", f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": []any{
		map[string]any{"selector": "#who", "text": "Ada"}, map[string]any{"selector": "#j", "value": "Away"}}}))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/trap"})
	t.Logf("a checkbox whose click handler leaves the scope:\n%s", f.mustRefuse(t, "e2e.fill_form", map[string]any{"fields": []any{
		map[string]any{"selector": "#who", "text": "Ada"}, map[string]any{"selector": "#agree", "checked": true}}}))
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
}

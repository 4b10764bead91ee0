package evidence_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/browsergate/browsergate/evidence"
)

// TestVisible: each character that changes how text reads without being
// seen is an escape, in HTML (Visible) and on a terminal line
// (VisibleLine, quoted); tab and line feed stay in a block of text, and
// plain text, accents and emoji are unchanged.
func TestVisible(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, html, line string }{
		{"plain", "Café – Home 😀", "Café – Home 😀", "Café – Home 😀"},
		{"bidi override", "invoice\u202Efdp.exe", `invoice\u202Efdp.exe`, `"invoice\u202Efdp.exe"`},
		{"bidi isolates and marks", "a\u2066b\u2069c\u200Fd\u061C", `a\u2066b\u2069c\u200Fd\u061C`, `"a\u2066b\u2069c\u200Fd\u061C"`},
		{"zero width", "pay\u200Bpal\uFEFF\u2060", `pay\u200Bpal\uFEFF\u2060`, `"pay\u200Bpal\uFEFF\u2060"`},
		{"ESC and CR", "ok\x1b[2J\rforged", `ok\u001B[2J\u000Dforged`, `"ok\u001B[2J\u000Dforged"`},
		{"NUL, DEL and C1 CSI", "a\x00b\x7fc\u009bd", `a\u0000b\u007Fc\u009Bd`, `"a\u0000b\u007Fc\u009Bd"`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `"a\u2028b\u2029c"`},
		{"tag character", "a\U000E0041b", `a\U000E0041b`, `"a\U000E0041b"`},
		{"variation selectors", "ok\uFE0F\U000E0100\U000E01EF\u180B", `ok\uFE0F\U000E0100\U000E01EF\u180B`, `"ok\uFE0F\U000E0100\U000E01EF\u180B"`},
		{"default ignorable", "a\u034Fb\u115F\u1160c\u3164d\uFFA0", `a\u034Fb\u115F\u1160c\u3164d\uFFA0`, `"a\u034Fb\u115F\u1160c\u3164d\uFFA0"`},
		{"braille blank", "pay\u2800pal", `pay\u2800pal`, `"pay\u2800pal"`},
		{"tab and line feed", "a\tb\nc", "a\tb\nc", `"a\tb\nc"`},
		{"quotes on a clean line", `say "hi" \o/`, `say "hi" \o/`, `say "hi" \o/`},
		{"quotes on a quoted line", "\"hi\"\x1b", `"hi"\u001B`, `"\"hi\"\u001B"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := evidence.Visible(c.in); got != c.html {
				t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.html)
			}
			if got := evidence.VisibleLine(c.in); got != c.line {
				t.Errorf("VisibleLine(%q) = %q, want %q", c.in, got, c.line)
			}
		})
	}
}

// hiddenIn returns the runes of s no reader sees: control characters but
// tab and line feed, format characters, line and paragraph separators,
// variation selectors, the other default-ignorable code points and the
// braille blank.
func hiddenIn(s string) []rune {
	var out []rune
	for _, r := range s {
		if r != '\t' && r != '\n' && (r == '\u2800' || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)) {
			out = append(out, r)
		}
	}
	return out
}

// unseen is page-chosen text with every kind of hidden character: a bidi
// override that makes "exe.txt" read as "txt.exe", ESC sequences that
// clear a terminal, a C1 CSI, a zero-width space, a tag character.
const unseen = "report\u202Etxt.exe \x1b[2J\x1b]0;pwned\x07 \u009b31m pay\u200Bpal \U000E0041"

// TestExportHTMLShowsHiddenCharactersEscaped: wherever a page's or an
// agent's text lands in the HTML report — title, URL, arguments, output
// (tab lists, file names), reasons, the scope's words, errors, blocked
// requests, the approval's note, the list of refusals — its hidden
// characters are \uXXXX escapes, as in the console and `evidence show`:
// the file holds none of them raw.
func TestExportHTMLShowsHiddenCharactersEscaped(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	shown := envelope("s1", "https://a.example.com/"+unseen)
	shown.After["title"] = unseen
	shown.Args = map[string]any{"url": "https://a.example.com/" + unseen, "text": unseen}
	shown.Output = "tabs:\n  t1 " + unseen + "\nsaved downloads/" + unseen
	shown.Error = unseen
	shown.Blocked = []evidence.BlockedRequest{{URL: "http://127.0.0.2/" + unseen, Rule: "allowed_domains", Reason: unseen, Layer: "interception"}}
	shown.Decision.Approval = &evidence.Approval{ID: "apr-1", Approved: true, Channel: "console", By: "olga", Note: unseen, At: t0}
	refused := envelope("s1", "https://a.example.com/")
	refused.Decision = evidence.Decision{Stage: "scope", Rule: "allowed_domains", Scope: unseen, Reasons: []string{unseen}}
	for _, e := range []*evidence.Envelope{shown, refused} {
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, raw, _ := exportHTML(t, path, evidence.HTMLOptions{})
	if h := hiddenIn(raw); len(h) > 0 {
		t.Errorf("the report holds %d hidden characters raw: %q", len(h), string(h))
	}
	want := `report\u202Etxt.exe \u001B[2J\u001B]0;pwned\u0007 \u009B31m pay\u200Bpal \U000E0041`
	if n := strings.Count(raw, want); n < 9 {
		t.Errorf("the escaped text shows %d times, want it in the title, URL, arguments, output, error, blocked request, note, reasons and refusals", n)
	}
}

// TestWriteTimelineShowsHiddenCharactersEscaped: `evidence show` escapes
// the same characters the same way, on one line.
func TestWriteTimelineShowsHiddenCharactersEscaped(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	e := envelope("s1", "https://a.example.com/"+unseen)
	e.After["title"] = unseen
	e.Error = unseen
	if err := s.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Records("s1")
	if err != nil {
		t.Fatal(err)
	}
	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := evidence.WriteTimeline(&buf, sums, map[string][]*evidence.Envelope{"s1": recs}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if h := hiddenIn(out); len(h) > 0 || !utf8.ValidString(out) {
		t.Errorf("the timeline holds hidden characters raw: %q", string(h))
	}
	if !strings.Contains(out, `"report\u202Etxt.exe \u001B[2J`) || strings.Count(out, `\u009B31m`) < 3 {
		t.Errorf("the timeline does not show the title, URL and error escaped as the report does:\n%s", out)
	}
}

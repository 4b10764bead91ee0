package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/browsergate/browsergate/toolclad"
)

func secretManifest(t testing.TB, value string) *toolclad.Manifest {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteFile(t, dir, "pw", value)
	path := testkit.WriteFile(t, dir, "m.toml", `
[tool]
name = "s"
[browser.scope]
allowed_domains = ["*.example.com"]
[secrets.PW]
file = "pw"
domains = ["login.example.com", "*.auth.example.com"]
[browser.commands.type_text]
`)
	m, err := toolclad.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMaskerForms: every spelling of the value is masked, in strings,
// nested values and log lines.
func TestMaskerForms(t *testing.T) {
	value := `p&ss<w>"rd/ 1`
	m := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	for _, form := range secretForms(value) {
		if got := m.mask("x " + form + " y"); strings.Contains(got, "ss") || !strings.Contains(got, "[secret PW]") {
			t.Errorf("form %q masked to %q", form, got)
		}
	}
	v := m.maskValue(map[string]any{"a": []any{"k=" + value}, "b": 3}).(map[string]any)
	if v["a"].([]any)[0] != "k=[secret PW]" || v["b"] != 3 {
		t.Errorf("maskValue = %v", v)
	}
	var buf bytes.Buffer
	log := slog.New(&maskHandler{inner: slog.NewJSONHandler(&buf, nil), m: func() *masker { return m }}).With("page", value)
	log.Info("gate decision", "url", "https://x/?q="+value, slog.Group("g", "v", value), "err", errText(value))
	if strings.Contains(buf.String(), "ss<w>") || strings.Contains(buf.String(), "p\\u0026ss") || strings.Count(buf.String(), "[secret PW]") != 4 {
		t.Errorf("log line: %s", buf.String())
	}
	var none *masker
	if none.mask(value) != value {
		t.Error("a nil masker changed its input")
	}
}

// TestMaskerSpellings: a value, and every run of six or more of its
// characters, is masked in each spelling a browser or a page gives it —
// percent-encoded with any mix of encoded and unencoded characters and
// either case of hex, form-encoded, HTML-escaped, JSON-, JavaScript- and
// Go-escaped, and in a mix of them — and text that is not the value is
// left as it is.
func TestMaskerSpellings(t *testing.T) {
	const value = `k& 9<Q!x&a 7>z` // the reviewer's: a query Chromium canonicalised and a DOM-serialised prefix showed it
	m := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	for _, tc := range []struct{ family, in, want string }{
		{"raw", "pw=" + value + ".", "pw=[secret PW]."},
		{"query as Chromium canonicalises it", "/f?p=k&%209%3CQ!x&a%207%3Ez", "/f?p=[secret PW]"},
		{"lower-case hex", "/f?p=k&%209%3cQ!x&a%207%3ez", "/f?p=[secret PW]"},
		{"encodeURIComponent", "?v=k%26%209%3CQ!x%26a%207%3Ez&x=1", "?v=[secret PW]&x=1"},
		{"form encoding", "?pw=k%26+9%3CQ%21x%26a+7%3Ez", "?pw=[secret PW]"},
		{"every character encoded", "?pw=%6b%26%20%39%3c%51%21%78%26%61%20%37%3e%7a", "?pw=[secret PW]"},
		{"encoded twice (a URL in a query)", "?to=http%3A%2F%2Fh%2F%3Fpw%3Dk%2526%25209%253CQ!x%2526a%25207%253Ez", "?to=http%3A%2F%2Fh%2F%3Fpw%3D[secret PW]"},
		{"HTML text", `<p id="e">k&amp; 9&lt;Q!x&amp;a 7&gt;z</p>`, `<p id="e">[secret PW]</p>`},
		{"HTML attribute", `<input value="k&amp; 9<Q!x&amp;a 7>z">`, `<input value="[secret PW]">`},
		{"numeric references", "k&#38; 9&#x3C;Q&#33;x&#x26;a&#32;7&#062;z", "[secret PW]"},
		{"JSON with HTML escaping", `{"v":"k\u0026 9\u003cQ!x\u0026a 7\u003ez"}`, `{"v":"[secret PW]"}`},
		{"JavaScript escapes", `'k\x26 9\u{3C}Q!x&a 7\x3ez'`, `'[secret PW]'`},
		{"a mix of all", `k%26 9&lt;Q\u0021x&#x26;a+7>z`, `[secret PW]`},
		// The reviewer's prefix: the DOM serialised a 9-character slice.
		{"HTML-escaped prefix", `<p id="e">k&amp; 9&lt;Q!x&amp;</p>`, `<p id="e">[part of secret PW]</p>`},
		{"encoded piece", "?p=9%3CQ!x%26a", "?p=[part of secret PW]"},
		{"JSON piece", `"Q!x\u0026a 7"`, `"[part of secret PW]"`},
		{"not the value", `5 &lt; 7 &amp;&amp; 9 &gt; 3; k& 9<R!x; %20%3C%3E; Q!x&a; 7>z k&`, `5 &lt; 7 &amp;&amp; 9 &gt; 3; k& 9<R!x; %20%3C%3E; Q!x&a; 7>z k&`},
		{"five characters", `k&amp; 9&lt; and x&amp;a 7`, `k&amp; 9&lt; and x&amp;a 7`},
	} {
		if got := m.mask(tc.in); got != tc.want {
			t.Errorf("%s: mask(%q) = %q, want %q", tc.family, tc.in, got, tc.want)
		}
	}
	// Every run of six or more characters, in every spelling of the list
	// below, shows nothing of the value once masked, even decoded.
	spell := map[string]func(string) string{
		"raw":       func(s string) string { return s },
		"path":      url.PathEscape,
		"query":     url.QueryEscape,
		"form":      formURLEncode,
		"lower-hex": func(s string) string { return lowerHexEscapes(url.QueryEscape(s)) },
		"html":      html.EscapeString,
		"json":      func(s string) string { b, _ := json.Marshal(s); return string(b) },
		"go":        strconv.Quote,
		"numeric":   numericRefs,
	}
	r := []rune(value)
	for n := minPiece; n <= len(r); n++ {
		for i := 0; i+n <= len(r); i++ {
			piece := string(r[i : i+n])
			for name, f := range spell {
				got := m.mask("<" + f(piece) + ">")
				if leaked := plain(got); containsRun(leaked, value) || !strings.Contains(got, "secret PW]") {
					t.Errorf("%s piece %q: masked to %q", name, f(piece), got)
				}
			}
		}
	}
}

// TestMaskerOtherAlphabets: a value beyond ASCII is masked in its UTF-8
// percent-encoding and its escapes (a surrogate pair beyond the BMP); one
// with runs of white space or no-break spaces also as the accessibility
// tree collapses them.
func TestMaskerOtherAlphabets(t *testing.T) {
	for _, tc := range []struct{ value, in, want string }{
		{"pässwörd-ñ9", "?q=p%C3%A4ssw%c3%b6rd-%C3%B19", "?q=[secret PW]"},
		{"pässwörd-ñ9", `p&#228;ssw&#xF6;rd-\u00f19`, "[secret PW]"},
		{"pässwörd-ñ9", "p%C3%A4ssw%C3%B6 and p%C3%A4ssw", "[part of secret PW] and p%C3%A4ssw"},
		{"a😀bcdef", `"a\ud83d\ude00bcdef"`, `"[secret PW]"`},
		{"a😀bcdef", `a%F0%9F%98%80bcdef a&#128512;bcdef a\U0001f600bcdef a\u{1F600}bcdef`, "[secret PW] [secret PW] [secret PW] [secret PW]"},
		{"ab  cd\u00a0ef!", "name: ab cd ef!", "name: [secret PW]"},
		{"ab  cd\u00a0ef!", "ab  cd&nbsp;ef!", "[secret PW]"},
		{`q"\/x1y2`, `"q\"\\\/x1y2"`, `"[secret PW]"`},
	} {
		m := newMasker([]*toolclad.Manifest{secretManifest(t, tc.value)})
		if got := m.mask(tc.in); got != tc.want {
			t.Errorf("value %q: mask(%q) = %q, want %q", tc.value, tc.in, got, tc.want)
		}
	}
}

// TestMaskerForAgent: the agent's own text comes back as it wrote it,
// also in the spelling the browser gives it (a query it wrote, canonicalised
// in the page's URL), so that what is masked does not tell a right guess
// from a wrong one; the full masker masks the right guess.
func TestMaskerForAgent(t *testing.T) {
	const value = `k& 9<Q!x&a 7>z`
	full := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	right, wrong := "k& 9<Q", "k& 9<q"
	for _, guess := range []string{right, wrong} {
		args := argTexts(map[string]any{"url": "http://127.0.0.1/search?q=" + guess})
		agent := agentMasker(full, args...)
		shown := "http://127.0.0.1/search?q=" + strings.NewReplacer(" ", "%20", "<", "%3C").Replace(guess)
		if got := agent.mask(shown); got != shown {
			t.Errorf("guess %q: the agent's own query came back as %q", guess, got)
		}
	}
	if got := full.mask("?q=k&%209%3CQ"); got != "?q=[part of secret PW]" {
		t.Errorf("the full masker let the right guess through: %q", got)
	}
	if agent := agentMasker(full, "url", "http://127.0.0.1/"); agent != full {
		t.Error("texts without secret material should get the full masker itself")
	}
	// What the agent did not write is still masked in its reply.
	agent := agentMasker(full, "k& 9<Q")
	if got := agent.mask("k& 9<Q, and the page shows k&amp; 9&lt;Q!x&amp;a"); got != "k& 9<Q, and the page shows [part of secret PW]" {
		t.Errorf("agent reply: %q", got)
	}
}

// TestMaskerLeavesNoRun: in random text made of pieces of the value, each
// character in a spelling drawn at random, and of characters and escape
// fragments around them, what the masker leaves between its labels holds
// no six consecutive characters of the value, as it is or decoded.
func TestMaskerLeavesNoRun(t *testing.T) {
	const value = `k& 9<Q!x&a 7>z`
	m := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	spell := []func(rune) string{
		func(c rune) string { return string(c) },
		func(c rune) string { return fmt.Sprintf("%%%02X", c) },
		func(c rune) string { return fmt.Sprintf("%%%02x", c) },
		func(c rune) string { return strings.ReplaceAll(url.QueryEscape(string(c)), "!", "%21") },
		func(c rune) string { return html.EscapeString(string(c)) },
		func(c rune) string { return fmt.Sprintf("&#%d;", c) },
		func(c rune) string { return fmt.Sprintf("&#x%X;", c) },
		func(c rune) string { return fmt.Sprintf(`\u%04x`, c) },
		func(c rune) string { return fmt.Sprintf(`\x%02X`, c) },
	}
	noise := []string{"&", "%", "%2", "amp;", "&amp", ";", "#", `\`, `\u00`, "x", "q", "Q", "!", "<", ">", "a", "7>", "k&"}
	rng := rand.New(rand.NewPCG(10, 2026))
	r := []rune(value)
	labels := regexp.MustCompile(`\[(part of )?secret PW\]`)
	for range 5000 {
		var b strings.Builder
		for j := 1 + rng.IntN(6); j > 0; j-- {
			if rng.IntN(2) == 0 {
				b.WriteString(noise[rng.IntN(len(noise))])
				continue
			}
			lo := rng.IntN(len(r))
			for _, c := range r[lo : lo+1+rng.IntN(len(r)-lo)] {
				b.WriteString(spell[rng.IntN(len(spell))](c))
			}
		}
		in := b.String()
		out := m.mask(in)
		for _, left := range labels.Split(out, -1) {
			if containsRun(left, value) || containsRun(decoded(left), value) {
				t.Fatalf("mask(%q) = %q leaves a run in %q", in, out, left)
			}
		}
	}
}

// decodeRE is the escapes decoded finds, for decoding as the standard
// library does (not as the masker does).
var decodeRE = regexp.MustCompile(`&#?[0-9a-zA-Z]+;|(?:%[0-9a-fA-F]{2})+|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\["\\/']|\+`)

// decoded is s with every escape read by the standard library: HTML
// references, percent-encoding, string escapes, '+' for a space.
func decoded(s string) string {
	return decodeRE.ReplaceAllStringFunc(s, func(e string) string {
		switch e[0] {
		case '&':
			return html.UnescapeString(e)
		case '%':
			u, _ := url.PathUnescape(e)
			return u
		case '+':
			return " "
		}
		if e == `\'` || e == `\/` {
			return e[1:]
		}
		u, _ := strconv.Unquote(`"` + e + `"`)
		return u
	})
}

// containsRun says whether s holds minPiece or more consecutive
// characters of v.
func containsRun(s, v string) bool {
	r := []rune(v)
	for i := 0; i+minPiece <= len(r); i++ {
		if strings.Contains(s, string(r[i:i+minPiece])) {
			return true
		}
	}
	return false
}

// numericRefs spells every character of s as a decimal HTML character
// reference.
func numericRefs(s string) string {
	var b strings.Builder
	for _, c := range s {
		fmt.Fprintf(&b, "&#%d;", c)
	}
	return b.String()
}

type errText string

func (e errText) Error() string { return "failed with " + string(e) }

// secretForms are spellings a value takes in what browsergate returns or
// records, whole (the masker once listed them one by one): as typed; URL-escaped (a form's GET query, a logged URL);
// HTML-escaped as the DOM serialises text and attributes (extract_html);
// JSON-escaped with and without HTML escaping (structured results,
// evidence); Go-quoted (snapshot values).
func secretForms(v string) []string {
	jsonInner := func(escapeHTML bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		enc.Encode(v)
		out := strings.TrimSuffix(b.String(), "\n")
		return out[1 : len(out)-1]
	}
	text := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(v)
	attr := strings.NewReplacer("&", "&amp;", "\"", "&quot;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(v)
	attrOld := strings.NewReplacer("&", "&amp;", "\"", "&quot;", "\u00a0", "&nbsp;").Replace(v)
	quoted := strconv.Quote(v)
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v), formURLEncode(v), html.EscapeString(v), text, attr, attrOld,
		jsonInner(true), jsonInner(false), quoted[1 : len(quoted)-1], collapse(v)}
	// Percent-escapes may come in either case.
	for _, f := range forms[1:4] {
		forms = append(forms, lowerHexEscapes(f))
	}
	return forms
}

// formURLEncode is the URL Standard's application/x-www-form-urlencoded
// serialisation, as a browser sends a GET form: ASCII letters, digits and
// *-._ stay, a space is '+', every other byte is %XX (Go's QueryEscape
// differs on '~' and '*').
func formURLEncode(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lowerHexEscapes rewrites %XX escapes with lower-case hex digits.
func lowerHexEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// agentMasker is m for the replies of a session whose agent wrote texts.
func agentMasker(m *masker, texts ...string) *masker {
	var a agentTexts
	m.note(&a, texts)
	return m.forAgent(&a)
}

// TestMaskerWindows1252: a value beyond ASCII is masked as a form on a
// page in windows-1252 (or ISO-8859-1) sends it — one %XX per character,
// the byte of that encoding — and as raw bytes of that encoding, and a
// character of 80 to 9F hex spelled as HTML reads it (&#150;, an en
// dash); with any mix of UTF-8 and windows-1252 spellings.
func TestMaskerWindows1252(t *testing.T) {
	for _, tc := range []struct{ value, in, want string }{
		{"Zä8-Lö2_Vü7-Kß4", "/done?pw=Z%E48-L%F62_V%FC7-K%DF4", "/done?pw=[secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "/done?pw=Z%e48-L%f62_V%fc7-K%df4&x=1", "/done?pw=[secret PW]&x=1"},
		{"Zä8-Lö2_Vü7-Kß4", "pw=Z%C3%A48-L%F62_V%C3%BC7-K%DF4", "pw=[secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "raw Z\xe48-L\xf62_V\xfc7-K\xdf4 bytes", "raw [secret PW] bytes"},
		{"Zä8-Lö2_Vü7-Kß4", "a piece: L%F62_V%FC7", "a piece: [part of secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "\xfc7-K\xdf", "\xfc7-K\xdf"}, // five characters
		{"€uro–2—x…9", "?v=%80uro%962%97x%859", "?v=[secret PW]"},
		{"€uro–2—x…9", "&#128;uro&#150;2&#x97;x&#133;9", "[secret PW]"},
		{"€uro–2—x…9", "\x80uro\x962\x97x\x859", "[secret PW]"},
		{"€uro–2—x…9", "\u0080uro\u00962\u0097x\u00859", "[secret PW]"}, // windows-1252 read as Latin-1
		{"Ãbcdef", "%C3bcdef", "[secret PW]"},                           // a byte of a UTF-8 lead read alone
		{"äbcdefg", "%C3%A4bcdefg %E4bcdefg", "[secret PW] [secret PW]"},
	} {
		m := newMasker([]*toolclad.Manifest{secretManifest(t, tc.value)})
		if got := m.mask(tc.in); got != tc.want {
			t.Errorf("value %q: mask(%q) = %q, want %q", tc.value, tc.in, got, tc.want)
		}
	}
	// The table: the WHATWG Encoding Standard's windows-1252.
	for b, want := range map[byte]rune{0x41: 'A', 0x80: '€', 0x81: 0x81, 0x8a: 'Š', 0x96: '–', 0x9f: 'Ÿ', 0xa0: 0xa0, 0xdf: 'ß', 0xff: 'ÿ'} {
		if got := windows1252(b); got != want {
			t.Errorf("windows1252(%#x) = %U, want %U", b, got, want)
		}
	}
	// UTF-8 text around is not broken up: a continuation byte of a valid
	// sequence is no character of its own.
	m := newMasker([]*toolclad.Manifest{secretManifest(t, "\u00a4\u00a4\u00a4abc")})
	if in := "€€€abc"; m.mask(in) != in { // € is E2 82 AC; ¤ would be A4
		t.Errorf("mask(%q) = %q", in, m.mask(in))
	}
}

// TestMaskerCase: letters match in either case — a page that shows the
// value with text-transform: uppercase or lowercase — in every spelling,
// by simple case folding (the Kelvin sign for k, the long s for s), and a
// character whose upper case is two (ß as SS, the ligature ﬁ as FI) also
// from those two.
func TestMaskerCase(t *testing.T) {
	for _, tc := range []struct{ value, in, want string }{
		{"Zq8-Lm2_Vx7-Kp4", "name: ZQ8-LM2_VX7-KP4.", "name: [secret PW]."},
		{"Zq8-Lm2_Vx7-Kp4", "zq8-lm2_vx7-kp4", "[secret PW]"},
		{"Zq8-Lm2_Vx7-Kp4", "?q=zQ8-lM", "?q=[part of secret PW]"},
		{"Zq8-Lm2_Vx7-Kp4", `"ZQ8-LM2_VX7-\u212aP4"`, `"[secret PW]"`}, // the Kelvin sign, escaped
		{"Zq8-Lm2_Vx7-Kp4", "%5A%51%38-lm2", "[part of secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "ZÄ8-LÖ2_VÜ7-KSS4", "[secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "ZÄ8-LÖ2_VÜ7-Kss4", "[secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "ZÄ8-LÖ2_VÜ7-Kẞ4", "[secret PW]"},
		{"Zä8-Lö2_Vü7-Kß4", "Z%C3%848-L%D62_V%DC7-KSS4", "[secret PW]"}, // UTF-8 and windows-1252, upper case
		{"abcßdefgh", "ABCSSDEFGH", "[secret PW]"},
		{"abcßdefgh", "BCSSDEF", "[part of secret PW]"},
		{"abcßdefgh", "CSSDEF", "CSSDEF"}, // five characters
		{"office-ﬁle9", "OFFICE-FILE9", "[secret PW]"},
		{"Sesame-99", "ſeſame-99", "[secret PW]"},
		{"Zq8-Lm2_Vx7-Kp4", "Zq8-Lx", "Zq8-Lx"},
	} {
		m := newMasker([]*toolclad.Manifest{secretManifest(t, tc.value)})
		if got := m.mask(tc.in); got != tc.want {
			t.Errorf("value %q: mask(%q) = %q, want %q", tc.value, tc.in, got, tc.want)
		}
	}
}

// TestMaskerForAgentAcrossCalls: what the agent wrote in any call of its
// session comes back as written in every later reply — the state line of
// the next call shows the URL it navigated to, a search page shows its
// query in its text — in whatever spelling, case or spacing the browser
// gives it back, so that a right and a wrong guess come back alike; what
// it did not write is masked, and the full masker masks the right guess.
func TestMaskerForAgentAcrossCalls(t *testing.T) {
	const value = "Zq8-Lm2_Vx7 Kp4"
	full := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	for _, guess := range []string{"Zq8-Lm", "Zq8-Lx", "q8-Lm2_Vx7", "zq8-lm2", "m2_Vx7  Kp4"} {
		var a agentTexts
		// Call 1: navigate; calls 2 to 40: other texts.
		full.note(&a, argTexts(map[string]any{"url": "http://127.0.0.1/search?q=" + url.QueryEscape(guess)}))
		for i := range 40 {
			full.note(&a, argTexts(map[string]any{"selector": fmt.Sprintf("#item-%d", i)}))
		}
		agent := full.forAgent(&a)
		for _, shown := range []string{
			`[state] url="http://127.0.0.1/search?q=` + url.QueryEscape(guess) + `"`,
			"http://127.0.0.1/search?q=" + strings.ReplaceAll(url.PathEscape(guess), "%20", "+"),
			"Results for " + html.EscapeString(guess),
			"RESULTS FOR " + strings.ToUpper(guess),
			"results for " + collapse(guess),
		} {
			if got := agent.mask(shown); got != shown {
				t.Errorf("guess %q: %q came back as %q", guess, shown, got)
			}
		}
	}
	var a agentTexts
	full.note(&a, []string{"url", "http://127.0.0.1/search?q=Zq8-Lm"})
	agent := full.forAgent(&a)
	for in, want := range map[string]string{
		"page shows Zq8-Lm2_V":   "page shows [part of secret PW]", // more than the agent wrote
		"page shows m2_Vx7":      "page shows [part of secret PW]",
		"and " + value:           "and [secret PW]",
		"q=Zq8-Lm, q=ZQ8-LM":     "q=Zq8-Lm, q=ZQ8-LM",
		"?q=Zq8-Lm&v=Vx7+Kp4ab…": "?q=Zq8-Lm&v=[part of secret PW]ab…",
	} {
		if got := agent.mask(in); got != want {
			t.Errorf("agent reply: mask(%q) = %q, want %q", in, got, want)
		}
	}
	if got := full.mask("?q=Zq8-Lm"); got != "?q=[part of secret PW]" {
		t.Errorf("the full masker let the right guess through: %q", got)
	}
	// However much the agent writes, it keeps one piece per character of
	// each form at most.
	var b agentTexts
	r := []rune(value)
	for i := range len(r) {
		for j := i + minPiece; j <= len(r); j++ {
			full.note(&b, []string{string(r[i:j]), strings.ToUpper(string(r[i:j])), url.QueryEscape(string(r[i:j]))})
		}
	}
	if n := len(b.held()); n != 1 {
		t.Errorf("every piece of the value noted: %d pieces kept, want 1 (the value): %q", n, b.held())
	}
}

// TestMaskerForAgentIsNoOracle: whatever the agent writes — pieces of the
// value and near misses, in random case and spelling — comes back as it
// wrote it, and as the browser respells it, in later replies of its
// session: whether it is masked never depends on the secret.
func TestMaskerForAgentIsNoOracle(t *testing.T) {
	const value = `Zä8-Lö2_Vü7-Kß4`
	full := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	rng := rand.New(rand.NewPCG(3, 2026))
	r := []rune(value)
	alphabet := []rune("Zä8-Lö2_Vü7-Kß4zÄLÖvÜkSsx9 ")
	masked := 0
	for range 3000 {
		lo := rng.IntN(len(r))
		g := []rune(string(r[lo : lo+1+rng.IntN(len(r)-lo)]))
		for i := range g {
			switch rng.IntN(6) {
			case 0:
				g[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				g[i] = unicode.SimpleFold(g[i])
			}
		}
		guess := string(g)
		if full.mask(guess) != guess {
			masked++
		}
		var a agentTexts
		full.note(&a, []string{"http://127.0.0.1/search?q=" + url.QueryEscape(guess)})
		agent := full.forAgent(&a)
		for _, shown := range []string{guess, url.QueryEscape(guess), strings.ToUpper(guess), strings.ToLower(guess), html.EscapeString(guess), numericRefs(guess)} {
			if got := agent.mask(shown); got != shown {
				t.Fatalf("guess %q: %q came back as %q", guess, shown, got)
			}
		}
	}
	if masked < 100 {
		t.Errorf("only %d of the guesses held a piece of the value: the test tests little", masked)
	}
}

// TestAgentTextsAreTheMCPSessions: what an agent wrote is its own in every
// session of its MCP session — on another tool, and after an expiry
// replaced one — and in no other MCP session's; it is forgotten when its
// MCP session ends.
func TestAgentTextsAreTheMCPSessions(t *testing.T) {
	m1 := secretManifest(t, "Zq8-Lm2_Vx7-Kp4")
	m2 := secretManifest(t, "Zq8-Lm2_Vx7-Kp4")
	e, err := New(Config{Manifests: []*toolclad.Manifest{m1, m2}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	shown := func(mcp string, m *toolclad.Manifest) bool {
		s, err := e.session(&toolclad.Call{SessionID: mcp, Manifest: m})
		if err != nil {
			t.Fatal(err)
		}
		return s.masker.forAgent(s.agent).mask("?q=Zq8-Lm") == "?q=Zq8-Lm"
	}
	a1, _ := e.session(&toolclad.Call{SessionID: "a", Manifest: m1})
	e.allSecrets.Load().note(a1.agent, argTexts(map[string]any{"url": "http://127.0.0.1/?q=Zq8-Lm"}))
	if !shown("a", m1) || !shown("a", m2) {
		t.Error("the agent's text is masked in a session of its own MCP session")
	}
	if shown("b", m1) {
		t.Error("the agent's text is shown to another MCP session")
	}
	renewed, err := e.renew(a1, "test")
	if err != nil || renewed == a1 || !shown("a", m1) {
		t.Errorf("after a renewal (%v), the agent's text is masked", err)
	}
	e.EndSession("a")
	if shown("a", m1) {
		t.Error("the agent's text is still its own after its MCP session ended")
	}
}

package mask_test

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

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// newMasker is the masker of one secret, PW, of value.
func newMasker(t testing.TB, value string) *mask.Masker {
	return mask.FromManifests([]*toolclad.Manifest{testkit.SecretManifest(t, value)})
}

// collapse is s with its white space collapsed, as the accessibility tree
// shows it.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestMaskerForms: every spelling of the value is masked, in strings,
// nested values and log lines.
func TestMaskerForms(t *testing.T) {
	t.Parallel()
	value := `p&ss<w>"rd/ 1`
	m := newMasker(t, value)
	for _, form := range secretForms(value) {
		if got := m.Mask("x " + form + " y"); strings.Contains(got, "ss") || !strings.Contains(got, "[secret PW]") {
			t.Errorf("form %q masked to %q", form, got)
		}
	}
	v := m.MaskValue(map[string]any{"a": []any{"k=" + value}, "b": 3}).(map[string]any)
	if v["a"].([]any)[0] != "k=[secret PW]" || v["b"] != 3 {
		t.Errorf("maskValue = %v", v)
	}
	var buf bytes.Buffer
	log := slog.New(mask.NewLogHandler(slog.NewJSONHandler(&buf, nil), func() *mask.Masker { return m })).With("page", value)
	log.Info("gate decision", "url", "https://x/?q="+value, slog.Group("g", "v", value), "err", errText(value))
	if strings.Contains(buf.String(), "ss<w>") || strings.Contains(buf.String(), "p\\u0026ss") || strings.Count(buf.String(), "[secret PW]") != 4 {
		t.Errorf("log line: %s", buf.String())
	}
	var none *mask.Masker
	if none.Mask(value) != value {
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
	t.Parallel()
	const value = `k& 9<Q!x&a 7>z` // the reviewer's: a query Chromium canonicalised and a DOM-serialised prefix showed it
	m := newMasker(t, value)
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
		if got := m.Mask(tc.in); got != tc.want {
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
	for n := mask.MinPart; n <= len(r); n++ {
		for i := 0; i+n <= len(r); i++ {
			piece := string(r[i : i+n])
			for name, f := range spell {
				got := m.Mask("<" + f(piece) + ">")
				if leaked := mask.Plain(got); containsRun(leaked, value) || !strings.Contains(got, "secret PW]") {
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
	t.Parallel()
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
		m := newMasker(t, tc.value)
		if got := m.Mask(tc.in); got != tc.want {
			t.Errorf("value %q: mask(%q) = %q, want %q", tc.value, tc.in, got, tc.want)
		}
	}
}

// TestMaskerLeavesNoRun: in random text made of pieces of the value, each
// character in a spelling drawn at random, and of characters and escape
// fragments around them, what the masker leaves between its labels holds
// no six consecutive characters of the value, as it is or decoded.
func TestMaskerLeavesNoRun(t *testing.T) {
	t.Parallel()
	const value = `k& 9<Q!x&a 7>z`
	m := newMasker(t, value)
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
		out := m.Mask(in)
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

// containsRun says whether s holds mask.MinPart or more consecutive
// characters of v.
func containsRun(s, v string) bool {
	r := []rune(v)
	for i := 0; i+mask.MinPart <= len(r); i++ {
		if strings.Contains(s, string(r[i:i+mask.MinPart])) {
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

// TestMaskerWindows1252: a value beyond ASCII is masked as a form on a
// page in windows-1252 (or ISO-8859-1) sends it — one %XX per character,
// the byte of that encoding — and as raw bytes of that encoding, and a
// character of 80 to 9F hex spelled as HTML reads it (&#150;, an en
// dash); with any mix of UTF-8 and windows-1252 spellings.
func TestMaskerWindows1252(t *testing.T) {
	t.Parallel()
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
		m := newMasker(t, tc.value)
		if got := m.Mask(tc.in); got != tc.want {
			t.Errorf("value %q: mask(%q) = %q, want %q", tc.value, tc.in, got, tc.want)
		}
	}
	// The table: the WHATWG Encoding Standard's windows-1252.
	for b, want := range map[byte]rune{0x41: 'A', 0x80: '€', 0x81: 0x81, 0x8a: 'Š', 0x96: '–', 0x9f: 'Ÿ', 0xa0: 0xa0, 0xdf: 'ß', 0xff: 'ÿ'} {
		if got := mask.Windows1252(b); got != want {
			t.Errorf("windows1252(%#x) = %U, want %U", b, got, want)
		}
	}
	// UTF-8 text around is not broken up: a continuation byte of a valid
	// sequence is no character of its own.
	m := newMasker(t, "\u00a4\u00a4\u00a4abc")
	if in := "€€€abc"; m.Mask(in) != in { // € is E2 82 AC; ¤ would be A4
		t.Errorf("mask(%q) = %q", in, m.Mask(in))
	}
}

// TestMaskerCase: letters match in either case — a page that shows the
// value with text-transform: uppercase or lowercase — in every spelling,
// by simple case folding (the Kelvin sign for k, the long s for s), and a
// character whose upper case is two (ß as SS, the ligature ﬁ as FI) also
// from those two.
func TestMaskerCase(t *testing.T) {
	t.Parallel()
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
		m := newMasker(t, tc.value)
		if got := m.Mask(tc.in); got != tc.want {
			t.Errorf("value %q: mask(%q) = %q, want %q", tc.value, tc.in, got, tc.want)
		}
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSecretEscapedPiecesNeverShow: a page that shows the typed value, or
// a part of it, in the spellings a browser gives it — in its URL's query
// (percent-encoded as Chromium canonicalises it: the space and < and >
// encoded, ! and & not), in its text (HTML-escaped by extract_html), in a
// link built with encodeURIComponent, in JSON in its text, in its title —
// shows nothing of it: every reply and the evidence export (each string
// of each record) are searched for every six-character piece of the
// value, as they are, percent-decoded and HTML-unescaped.
func TestSecretEscapedPiecesNeverShow(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = `k& 9<Q!x&a 7>z`
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	f := startWith(t, strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n",
		"[browser.commands.snapshot]\n[browser.commands.extract_html]\n", 1))
	site, _ := serveLogged(t, map[string]string{
		"/f": `<title>f</title><input type=password id=pw oninput="
const v = this.value;
document.getElementById('e').textContent = v.slice(0, 9);
document.getElementById('l').href = '/x?v=' + encodeURIComponent(v.slice(1));
document.getElementById('j').textContent = JSON.stringify({v: v.slice(3)});
document.title = v.slice(2, 10);
history.replaceState(null, '', '?p=' + v)"><p id=e></p><a id=l href=/x>link</a><p id=j></p>`,
	})
	var replies []string
	call := func(tool string, args map[string]any) string {
		out := f.mustAllow(t, tool, args)
		replies = append(replies, out)
		return out
	}
	call("e2e.navigate", map[string]any{"url": site + "/f"})
	typed := call("e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	call("e2e.snapshot", nil)
	echo := call("e2e.extract_html", map[string]any{"selector": "#e"})
	call("e2e.extract_html", nil)
	exported := exportTexts(t, f)
	// The page did show the value: the masker named it (in the state
	// line the page's URL is inert, brackets escaped).
	if !strings.Contains(typed, `?p=\x5bsecret PW\x5d`) || !strings.Contains(echo, "[part of secret PW]") {
		t.Errorf("the page's URL or text did not show the masked value:\n%s\n%s", typed, echo)
	}
	texts := append(replies, exported...)
	for _, text := range texts {
		for _, form := range []string{text, html.UnescapeString(text), percentDecoded(text, false), percentDecoded(text, true),
			percentDecoded(html.UnescapeString(text), false), html.UnescapeString(percentDecoded(text, false))} {
			for i := 0; i+6 <= len(value); i++ {
				if piece := value[i : i+6]; strings.Contains(form, piece) {
					t.Errorf("LEAK: the piece %q of the secret shows in %q, in:\n%s", piece, form, text)
				}
			}
		}
	}
}

var percentRE = regexp.MustCompile(`(?:%[0-9a-fA-F]{2})+`)

// percentDecoded decodes every %XX of s (a stray % stays); with form, '+'
// is a space too.
func percentDecoded(s string, form bool) string {
	if form {
		s = strings.ReplaceAll(s, "+", " ")
	}
	return percentRE.ReplaceAllStringFunc(s, func(e string) string {
		u, _ := url.PathUnescape(e)
		return u
	})
}

// jsonStrings are the strings in a decoded JSON value, keys included.
func jsonStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, jsonStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range x {
			out = append(out, k)
			out = append(out, jsonStrings(e)...)
		}
		return out
	}
	return nil
}

// maskedManifest is secretBoundManifest with extract_html.
var maskedManifest = strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n",
	"[browser.commands.snapshot]\n[browser.commands.extract_html]\n", 1)

// replyRecorder calls tools and keeps every string of every result (its
// text and its structured content).
type replyRecorder struct {
	f     *fixture
	texts []string
}

func (r *replyRecorder) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	res := r.f.callResult(t, tool, args)
	text := resultText(res)
	if res.IsError {
		t.Fatalf("%s %v refused:\n%s", tool, args, text)
	}
	r.texts = append(r.texts, text)
	b, _ := json.Marshal(res)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	r.texts = append(r.texts, jsonStrings(v)...)
	return text
}

// exportTexts are the evidence export and every string of each record.
func exportTexts(t *testing.T, f *fixture) []string {
	t.Helper()
	f.cs.Close()
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	texts := []string{export}
	sc := bufio.NewScanner(strings.NewReader(export))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("export line: %v", err)
		}
		texts = append(texts, jsonStrings(rec)...)
	}
	return texts
}

// noPieceShows fails the test when a text holds a piece of six characters
// of value: as it is, HTML-unescaped, percent-decoded as UTF-8 and as
// windows-1252, each of them case-folded (ß as ss).
func noPieceShows(t *testing.T, value string, texts []string) {
	t.Helper()
	fold := func(s string) string {
		return strings.ToLower(strings.NewReplacer("ß", "ss", "ẞ", "ss").Replace(s))
	}
	r := []rune(value)
	for _, text := range texts {
		for _, form := range []string{text, html.UnescapeString(text), percentDecoded(text, false), percentDecoded(text, true),
			percentDecoded1252(text), percentDecoded1252(html.UnescapeString(text)), html.UnescapeString(percentDecoded(text, false))} {
			for _, form := range []string{form, fold(form)} {
				for i := 0; i+6 <= len(r); i++ {
					piece := string(r[i : i+6])
					if strings.Contains(form, piece) || strings.Contains(form, fold(piece)) {
						t.Errorf("LEAK: the piece %q of the secret shows in %q, in:\n%s", piece, form, text)
					}
				}
			}
		}
	}
}

// cp1252 are the characters of the bytes 80 to 9F hex in windows-1252
// (the WHATWG Encoding Standard's table).
var cp1252 = []rune("€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ")

// percentDecoded1252 decodes every %XX of s as windows-1252 (a page in
// that encoding sent it): one character per byte.
func percentDecoded1252(s string) string {
	return percentRE.ReplaceAllStringFunc(s, func(e string) string {
		var b strings.Builder
		for i := 0; i+2 < len(e); i += 3 {
			v, _ := strconv.ParseUint(e[i+1:i+3], 16, 8)
			switch {
			case v >= 0x80 && v < 0xa0:
				b.WriteRune(cp1252[v-0x80])
			default:
				b.WriteRune(rune(v))
			}
		}
		return b.String()
	})
}

// TestSecretWindows1252FormNeverShows: a GET form on a page in
// windows-1252 sends a value beyond ASCII in that encoding (ä as %E4, not
// %C3%A4); the page it leads to shows its query in its URL and in its
// text, and a field keeps it. No reply and no record shows a piece of it,
// read in any of those encodings or in either case.
func TestSecretWindows1252FormNeverShows(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "Zä8-Lö2_Vü7-Kß4"
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	f := startWith(t, maskedManifest)
	site, _ := serveLogged(t, map[string]string{
		"/l1": `<html><head><meta charset="windows-1252"><title>Sign in</title></head><body><form method=get action="/done"><input type=password id=pw name=pw><button id=go>Sign in</button></form></body></html>`,
		"/done": `<html><head><meta charset="windows-1252"><title>Done</title></head><body><p id=q></p><p id=u></p>
<script>document.getElementById('q').textContent = location.search; document.getElementById('u').textContent = location.search.toUpperCase();</script></body></html>`,
	})
	r := &replyRecorder{f: f}
	r.call(t, "e2e.navigate", map[string]any{"url": site + "/l1"})
	r.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	sent := r.call(t, "e2e.submit_form", map[string]any{"selector": "#go"})
	r.call(t, "e2e.snapshot", nil)
	r.call(t, "e2e.extract_html", nil)
	// The form sent the value in windows-1252, and the masker named it.
	if !strings.Contains(sent, `/done?pw=\x5bsecret PW\x5d`) {
		t.Errorf("the page's URL did not show the masked value:\n%s", sent)
	}
	noPieceShows(t, value, append(r.texts, exportTexts(t, f)...))
}

// TestSecretUpperCasedNeverShows: a page that shows the typed value with
// CSS text-transform (upper case, lower case), which the accessibility
// tree reads as rendered, shows no piece of it in any reply or record.
func TestSecretUpperCasedNeverShows(t *testing.T) {
	// Not parallel: t.Setenv.
	for _, value := range []string{"Zq8-Lm2_Vx7-Kp4", "Zä8-Lö2_Vü7-Kß4"} {
		t.Run(value, func(t *testing.T) {
			t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
			f := startWith(t, maskedManifest)
			site, _ := serveLogged(t, map[string]string{
				"/u": `<meta charset=utf-8><title>u</title><input type=password id=pw oninput="
for (const id of ['e', 'l', 'p']) document.getElementById(id).textContent = this.value;
document.title = this.value.toUpperCase().slice(1)">
<p>Your password: <span id=e style="text-transform: uppercase"></span></p>
<p>Again: <span id=l style="text-transform: lowercase"></span> and <span id=p style="text-transform: capitalize"></span></p>`,
			})
			r := &replyRecorder{f: f}
			r.call(t, "e2e.navigate", map[string]any{"url": site + "/u"})
			r.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
			shot := r.call(t, "e2e.snapshot", nil)
			r.call(t, "e2e.extract_html", nil)
			if !strings.Contains(shot, "[secret PW]") {
				t.Errorf("the snapshot did not show the masked value:\n%s", shot)
			}
			noPieceShows(t, value, append(r.texts, exportTexts(t, f)...))
		})
	}
}

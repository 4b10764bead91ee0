package main

import (
	"bufio"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
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
	f.cs.Close()
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	// The page did show the value: the masker named it (in the state
	// line the page's URL is inert, brackets escaped).
	if !strings.Contains(typed, `?p=\x5bsecret PW\x5d`) || !strings.Contains(echo, "[part of secret PW]") {
		t.Errorf("the page's URL or text did not show the masked value:\n%s\n%s", typed, echo)
	}
	texts := append(replies, export)
	sc := bufio.NewScanner(strings.NewReader(export))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("export line: %v", err)
		}
		texts = append(texts, jsonStrings(rec)...)
	}
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

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// maskScopeManifest has secrets read from files (the test's own, by
// absolute path), typed only on 127.0.0.1; the scope allows 127.0.0.3 too.
const maskScopeManifest = `
[tool]
name = %q
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]
[browser.commands.navigate]
[browser.commands.type_text]
[browser.commands.snapshot]
[browser.commands.extract_html]
%s`

// fileSecret is a [secrets.NAME] table whose value is in a file of dir.
func fileSecret(t *testing.T, dir, name, value, extra string) string {
	t.Helper()
	path := testkit.WriteFile(t, dir, strings.ToLower(name)+".txt", value)
	return fmt.Sprintf("[secrets.%s]\nfile = %q\ndomains = [\"127.0.0.1\"]\n%s\n", name, path, extra)
}

// logLines are serve's JSON log lines, decoded.
func logLines(t *testing.T, f *fixture) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(f.stderr.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			out = append(out, line)
		}
	}
	return out
}

// ownWordsRE are the values of a log line's or a record's own fields:
// stage names, rule names, tools, commands.
var ownWordsRE = regexp.MustCompile(`^[a-z0-9_]+$`)

// TestMaskerNeverMasksItsOwnWords: browsergate's own words are never
// masked, whatever a secret shares with them. With a secret that holds
// "Navigated" (navigate's reply begins "navigated to") and one that holds
// "SECRET" (the stage secrets, the labels [secret NAME], the refusals'
// sentences), the first reply, the refusals at stages secrets and scope,
// the replies while the page shows the typed value, the state lines,
// `evidence show` and the debug log read browsergate's words as written:
// no "[part of secret", the labels whole and naming the right secret,
// every stage and field name intact — while the value the page shows is
// masked, and never shows.
func TestMaskerNeverMasksItsOwnWords(t *testing.T) {
	t.Parallel()
	const nav, sec = "Navigated-Home-42", "xSECRETx99"
	dir := t.TempDir()
	f := startWith(t, fmt.Sprintf(maskScopeManifest, "e2e",
		fileSecret(t, dir, "NAV", nav, `fields = "text"`)+fileSecret(t, dir, "SEC", sec, "")), "--log-level", "debug")
	site, _ := serveLogged(t, map[string]string{
		"/home": `<title>home</title><p>welcome home</p><input id=name>
<input type=password id=pw oninput="document.getElementById('e').textContent = 'you typed ' + this.value;
document.title = this.value; history.replaceState(null, '', '?v=' + encodeURIComponent(this.value))"><p id=e></p>`,
	})
	var replies []string
	call := func(tool string, args map[string]any, refused bool, wants ...string) string {
		t.Helper()
		text, isErr := f.call(t, tool, args)
		replies = append(replies, text)
		if isErr != refused {
			t.Fatalf("%s %v: refused=%v, want %v:\n%s", tool, args, isErr, refused, text)
		}
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s %v: the reply lacks %q:\n%s", tool, args, w, text)
			}
		}
		return text
	}
	// The first reply, before anything was typed, on the secrets' own site.
	first := call("e2e.navigate", map[string]any{"url": site + "/home"}, false, "navigated to "+site+"/home", `[state] `)
	if !strings.HasPrefix(first, "navigated to http://") {
		t.Errorf("the first reply does not begin with browsergate's words:\n%s", first)
	}
	call("e2e.type_text", map[string]any{"selector": "#name", "text": "<SEC>"}, true,
		"DENIED at secrets: secret SEC goes only into password fields", "rule: ")
	call("e2e.type_text", map[string]any{"text": "<SEC>"}, true, "DENIED at secrets: secret SEC can only be typed into an element named by ref or selector")
	call("e2e.navigate", map[string]any{"url": "http://127.0.0.2:9/x"}, true, "DENIED at scope")
	call("e2e.type_text", map[string]any{"selector": "#name", "text": "<NAV>"}, false, "typed secret NAV into")
	// The page shows the typed value in its text, title and URL: masked,
	// with a whole label that names the right secret.
	call("e2e.type_text", map[string]any{"selector": "#pw", "text": "<SEC>"}, false,
		"typed secret SEC into", `title="\x5bsecret SEC\x5d"`, `?v=\x5bsecret SEC\x5d`)
	call("e2e.snapshot", nil, false, "you typed [secret SEC]", "[secret NAV]")
	call("e2e.navigate", map[string]any{"url": site + "/home"}, false, "navigated to "+site+"/home")

	f.cs.Close()
	show, code := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	if code != 0 {
		t.Fatalf("evidence show: exit %d", code)
	}
	for _, w := range []string{"DENY secrets: secret domains — secret SEC goes only into password fields", "-> " + site + "/home?v=[secret SEC] \"[secret SEC]\""} {
		if !strings.Contains(show, w) {
			t.Errorf("evidence show lacks %q:\n%s", w, show)
		}
	}
	raw, err := os.ReadFile(f.evidence)
	if err != nil {
		t.Fatal(err)
	}
	sinks := map[string]string{"replies": strings.Join(replies, "\n"), "evidence show": show, "serve's log": f.stderr.String(), "raw evidence": string(raw)}
	for name, text := range sinks {
		if i := strings.Index(text, "[part of secret"); i >= 0 {
			t.Errorf("%s mask browsergate's own words: …%s…", name, text[max(0, i-100):min(len(text), i+100)])
		}
		for _, v := range []string{nav, sec, url.QueryEscape(sec)} {
			if strings.Contains(text, v) {
				t.Errorf("LEAK: %s show the value %q", name, v)
			}
		}
	}
	// The log's field names and its stages, rules, tools and commands
	// are browsergate's words, whole.
	decisions := 0
	for _, line := range logLines(t, f) {
		for k, v := range line {
			if !ownWordsRE.MatchString(k) {
				t.Errorf("log field name %q is not browsergate's: %v", k, line)
			}
			s, _ := v.(string)
			switch k {
			case "stage", "tool", "command":
				if !ownWordsRE.MatchString(s) {
					t.Errorf("log field %s=%q is not browsergate's word: %v", k, s, line)
				}
			case "msg", "rule":
				if strings.Contains(s, "[") {
					t.Errorf("log field %s=%q was masked: %v", k, s, line)
				}
			}
		}
		if line["msg"] == "gate decision" {
			decisions++
		}
	}
	if decisions < 7 {
		t.Errorf("the log has %d gate decisions, want 7 or more: the log was not exercised", decisions)
	}
}

// TestMaskerOnlyItsManifestsSecrets: two manifests in one daemon, each
// with a secret of its own on the same site. A page of one that prints
// both values shows its own secret masked and the other's as the page
// wrote it: no reply, record or log line of one names the other's
// secret.
func TestMaskerOnlyItsManifestsSecrets(t *testing.T) {
	t.Parallel()
	const alpha, bravo = "alpha7731Qxw", "bravo4419Zkp"
	dir := t.TempDir()
	other := testkit.WriteFile(t, dir, "other.toml", fmt.Sprintf(maskScopeManifest, "other", fileSecret(t, dir, "BRAVO", bravo, "")))
	f := startWith(t, fmt.Sprintf(maskScopeManifest, "e2e", fileSecret(t, dir, "ALPHA", alpha, "")), "--manifest", other, "--log-level", "debug")
	site, _ := serveLogged(t, map[string]string{
		"/both": `<title>` + alpha + ` ` + bravo + `</title><p>alpha says ` + alpha + `, bravo says ` + bravo + `</p>`,
	})
	check := func(tool, own, ownName, foreign, foreignName string) {
		t.Helper()
		for _, c := range []struct {
			command string
			args    map[string]any
		}{{"navigate", map[string]any{"url": site + "/both"}}, {"snapshot", nil}, {"extract_html", nil}} {
			text := f.mustAllow(t, tool+"."+c.command, c.args)
			if strings.Contains(text, "secret "+foreignName) {
				t.Errorf("%s.%s names the other manifest's secret %s:\n%s", tool, c.command, foreignName, text)
			}
			if !strings.Contains(text, foreign) || strings.Contains(text, own) || !strings.Contains(text, "secret "+ownName) {
				t.Errorf("%s.%s: want its own secret %s masked and the other's value as the page wrote it:\n%s", tool, c.command, ownName, text)
			}
		}
	}
	check("e2e", alpha, "ALPHA", bravo, "BRAVO")
	check("other", bravo, "BRAVO", alpha, "ALPHA")

	f.cs.Close()
	for _, line := range logLines(t, f) {
		b, _ := json.Marshal(line)
		if tool, _ := line["tool"].(string); (tool == "e2e" && strings.Contains(string(b), "secret BRAVO")) ||
			(tool == "other" && strings.Contains(string(b), "secret ALPHA")) {
			t.Errorf("a log line of %s names the other manifest's secret: %s", tool, b)
		}
	}
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	records := 0
	for _, rec := range strings.Split(strings.TrimSpace(export), "\n") {
		records++
		if (strings.Contains(rec, `"tool":"e2e"`) && strings.Contains(rec, "secret BRAVO")) ||
			(strings.Contains(rec, `"tool":"other"`) && strings.Contains(rec, "secret ALPHA")) {
			t.Errorf("a record names another manifest's secret: %s", rec)
		}
	}
	if records < 6 {
		t.Errorf("%d records, want 6 or more", records)
	}
}

// TestMaskerIsNoOracleOffTheSecretsSite: a page off a secret's domains
// never received its value, so nothing it shows is masked for it — a
// hostile page in scope that prints many six-character candidates, real
// pieces of the secret among them, gets every one back as it printed it
// (before the secret is typed, and after it was typed on its own site and
// the agent navigated away) — while the secret's own site, which echoes
// the typed value in every spelling, shows nothing of it in any reply,
// the evidence, the raw bbolt file or the debug log.
func TestMaskerIsNoOracleOffTheSecretsSite(t *testing.T) {
	t.Parallel()
	const value = `Qv7&pLm<2-Zx9>Kw4`
	dir := t.TempDir()
	f := startWith(t, fmt.Sprintf(maskScopeManifest, "e2e", fileSecret(t, dir, "PW", value, "")), "--log-level", "debug")
	r := []rune(value)
	var cands []string
	for i := 0; i+6 <= len(r); i++ {
		real := string(r[i : i+6])
		fake := []rune(real)
		fake[5] = 'j' // one character off: not a piece
		cands = append(cands, real, string(fake), strings.ToUpper(real))
	}
	var page strings.Builder
	page.WriteString("<title>" + html.EscapeString(strings.Join(cands[:6], " ")) + "</title><ul>")
	for _, c := range cands {
		fmt.Fprintf(&page, "<li>%s</li>", html.EscapeString(c))
	}
	page.WriteString("</ul>")
	hostile, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{"/cands": page.String()})
	site, _ := serveLogged(t, map[string]string{
		"/login": `<title>login</title><input type=password id=pw oninput="
const v = this.value;
document.getElementById('raw').textContent = v;
document.getElementById('up').textContent = v.toUpperCase();
document.getElementById('json').textContent = JSON.stringify({v});
document.getElementById('pct').textContent = encodeURIComponent(v);
document.getElementById('part').textContent = v.slice(2, 11);
document.title = v; history.replaceState(null, '', '?p=' + encodeURIComponent(v))">
<p id=raw></p><p id=up></p><p id=json></p><p id=pct></p><p id=part></p>`,
	})
	offSite := func(when string) {
		t.Helper()
		rec := &replyRecorder{f: f}
		rec.call(t, "e2e.navigate", map[string]any{"url": hostile + "/cands"})
		snap := rec.call(t, "e2e.snapshot", nil)
		rec.call(t, "e2e.extract_html", nil)
		all := strings.Join(rec.texts, "\n")
		if strings.Contains(all, "secret PW") {
			t.Errorf("%s: a reply from the page off the secret's domains masks something:\n%s", when, all)
		}
		for _, c := range cands {
			if !strings.Contains(snap, c) {
				t.Errorf("%s: the candidate %q is not shown as the page printed it:\n%s", when, c, snap)
			}
		}
	}
	offSite("before the secret was typed")

	own := &replyRecorder{f: f}
	own.call(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	typed := own.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	snap := own.call(t, "e2e.snapshot", nil)
	own.call(t, "e2e.extract_html", nil)
	if !strings.Contains(typed, `title="\x5bsecret PW\x5d"`) || strings.Count(snap, "[secret PW]") < 2 || !strings.Contains(snap, "[part of secret PW]") {
		t.Errorf("the secret's own site did not show the masked value:\n%s\n%s", typed, snap)
	}
	noPieceShows(t, value, own.texts)

	offSite("after it was typed on its site and the agent navigated away")

	f.cs.Close()
	noPieceShows(t, value, exportTexts(t, f))
	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	raw, err := os.ReadFile(filepath.Clean(f.evidence))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(value)
	for name, text := range map[string]string{"evidence show": show, "raw evidence": string(raw), "serve's log": f.stderr.String()} {
		for _, form := range []string{value, url.QueryEscape(value), url.PathEscape(value), html.EscapeString(value), string(js[1 : len(js)-1]), strings.ToUpper(value)} {
			if strings.Contains(text, form) {
				t.Errorf("LEAK: %s show the value as %q", name, form)
			}
		}
	}
	noPieceShows(t, value, []string{f.stderr.String()})
}

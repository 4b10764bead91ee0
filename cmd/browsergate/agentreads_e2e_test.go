package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/toolclad"
)

// readsManifest declares navigate and snapshot with descriptions of the
// manifest's own, neither ending with a period.
const readsManifest = `
[tool]
name = "reads"
description = "what the agent reads"
timeout_seconds = 30

[browser]
connect = "launch"
startup_timeout_seconds = 30
max_interactions = 1000

[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]

[browser.commands.navigate]
description = "Open a page of the demo site"
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
description = "Read the page:"
[browser.commands.type_text]
[browser.commands.list_tabs]
[browser.commands.switch_tab]
[browser.commands.new_tab]
`

// TestWhatTheAgentReads: what the agent reads is plain and true.
//
//   - A refusal's text holds no literal \n: several bad arguments are
//     named on one line.
//   - A tool's description ends its sentence before browsergate's note
//     and the scope summary after it, whatever the manifest's ends with.
//   - navigate says where a redirect took the tab, with the final URL in
//     its structured content.
//   - list_tabs lists the tabs in one order, the order they were opened,
//     however often the agent switches between them.
//   - A password field shows the same mask for a 6-character password as
//     for any other, never one dot a character.
func TestWhatTheAgentReads(t *testing.T) {
	t.Parallel()
	f := startWith(t, readsManifest)

	t.Run("no escaped line breaks in refusals", func(t *testing.T) {
		text := f.mustRefuse(t, "reads.navigate", map[string]any{"url": 7, "colour": "red", "wait": true},
			`argument "url"`, `argument "colour"`, `argument "wait"`)
		if strings.Contains(text, `\n`) {
			t.Errorf("the refusal holds a literal \\n:\n%s", text)
		}
		first, _, _ := strings.Cut(text, "\n")
		for _, arg := range []string{"url", "colour", "wait"} {
			if !strings.Contains(first, `argument "`+arg+`"`) {
				t.Errorf("the refusal's first line does not name argument %s: %s", arg, first)
			}
		}
	})

	t.Run("descriptions end their sentences", func(t *testing.T) {
		res, err := f.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tool := range res.Tools {
			got[tool.Name] = tool.Description
			// A letter or digit straight before a sentence browsergate
			// adds is a description that ran into it.
			if loc := regexp.MustCompile(`[\pL\pN:,;] (Page text in results|Scope:)`).FindStringIndex(tool.Description); loc != nil {
				t.Errorf("%s: the description runs into the text after it: %q", tool.Name, tool.Description)
			}
		}
		if want := "Open a page of the demo site. " + toolclad.UntrustedNote + " Scope: "; !strings.HasPrefix(got["reads.navigate"], want) {
			t.Errorf("navigate's description is %q, want it to begin %q", got["reads.navigate"], want)
		}
		if want := "Read the page. " + toolclad.UntrustedNote; got["reads.snapshot"] != want {
			t.Errorf("snapshot's description is %q, want %q", got["reads.snapshot"], want)
		}
	})

	t.Run("navigate says where a redirect took the tab", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/new?from=old", http.StatusFound) })
		mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<title>new</title><p>the new place</p>") })
		site, stop, err := serveOn("127.0.0.1:0", mux)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		res := f.callResult(t, "reads.navigate", map[string]any{"url": site + "/old"})
		text := resultText(res)
		if res.IsError {
			t.Fatalf("navigate refused:\n%s", text)
		}
		first, _, _ := strings.Cut(text, "\n")
		if want := "navigated to " + site + "/old, and was redirected to " + site + "/new?from=old (HTTP 200 OK)"; first != want {
			t.Errorf("navigate's first line is %q, want %q", first, want)
		}
		var st struct {
			FinalURL   string `json:"final_url"`
			Redirected bool   `json:"redirected"`
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &st); err != nil || st.FinalURL != site+"/new?from=old" || !st.Redirected {
			t.Errorf("structured content %s, want final_url %s and redirected true", raw, site+"/new?from=old")
		}
		// Where there is no redirect, nothing is said of one.
		text = f.mustAllow(t, "reads.navigate", map[string]any{"url": site + "/new"})
		if strings.Contains(text, "redirected") {
			t.Errorf("navigate without a redirect says it was redirected:\n%s", text)
		}
	})

	t.Run("list_tabs keeps its order", func(t *testing.T) {
		f.mustAllow(t, "reads.navigate", map[string]any{"url": f.siteURL + "/"})
		for _, p := range []string{"/docs", "/login", "/elsewhere"} {
			f.mustAllow(t, "reads.new_tab", map[string]any{"url": f.siteURL + p})
		}
		order := func() []string {
			tabs, _ := f.tabs(t, "reads")
			var ids []string
			for _, tb := range tabs {
				ids = append(ids, tb.Tab)
			}
			return ids
		}
		first := order()
		if len(first) != 4 || !slices.IsSortedFunc(first, func(a, b string) int { return idNumber(a) - idNumber(b) }) {
			t.Fatalf("list_tabs lists %v, want four tabs in the order they were opened", first)
		}
		for _, tab := range []string{first[2], first[0], first[3], first[1]} {
			f.mustAllow(t, "reads.switch_tab", map[string]any{"tab": tab})
			if got := order(); !slices.Equal(got, first) {
				t.Errorf("after switch_tab %s, list_tabs lists %v, want %v", tab, got, first)
			}
		}
	})

	t.Run("a password shows a fixed mask", func(t *testing.T) {
		f.mustAllow(t, "reads.navigate", map[string]any{"url": f.siteURL + "/login"})
		pass := findRef(f.mustAllow(t, "reads.snapshot", nil), "Password")
		if pass == "" {
			t.Fatal("the login page's snapshot has no password field")
		}
		f.mustAllow(t, "reads.type_text", map[string]any{"ref": pass, "text": "s3cret"})
		snap := f.mustAllow(t, "reads.snapshot", nil)
		if want := `value="` + snapshot.PasswordMask + `"`; !strings.Contains(snap, want) {
			t.Errorf("the password field does not show %s:\n%s", want, snap)
		}
		if strings.Contains(snap, `value="••••••"`) {
			t.Errorf("the password field shows one dot a character:\n%s", snap)
		}
	})
}

// idNumber is the number of a short tab id ("t3": 3).
func idNumber(id string) int {
	var n int
	fmt.Sscanf(id, "t%d", &n)
	return n
}

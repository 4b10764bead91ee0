package a11y

import (
	_ "embed" // axe-core
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Source is axe-core's script (axe/axe.min.js, unmodified); evaluated in a
// world, it defines axe there.
//
//go:embed axe/axe.min.js
var Source string

// Version is the vendored axe-core's version, and SRI its script's
// SHA-256 as the package's sri-history.json gives it.
const (
	Version = "4.14.1"
	SRI     = "sha256-KTSJmUUM3yhJqOcLeRL8LahahJ2jnA0NU5T1HUqe2Vw="
)

// Loaded is an expression that is true once Source ran in the world.
const Loaded = `typeof axe === "object" && typeof axe.run === "function"`

// Run is an expression whose promise resolves to the audit of the
// world's document as JSON text (a Result): axe's default rules (WCAG 2.x
// A and AA, and its best practices), the violations with up to
// maxTargets of their elements' selectors each, and how many rules passed
// or need a human's review. The elements of those selectors, in order,
// are left in the world's Elements array, for their refs. Frames are not
// audited by this run: axe is put in each frame's own world and run there
// (AddFrame).
var Run = fmt.Sprintf(`axe.run(document, {iframes: false, resultTypes: ["violations"], elementRef: true, selectors: true, ancestry: false, xpath: false})
.then(r => { const els = []; const out = JSON.stringify({
  violations: r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, count: v.nodes.length,
    targets: v.nodes.slice(0, %d).map(n => { els.push(n.element || null); return n.target.flat(Infinity).join(" >>> "); })})),
  passes: r.passes.length, incomplete: r.incomplete.length});
  %s = els; return out; })`, maxTargets, Elements)

// Elements is the world's array of the elements whose selectors the last
// Run gave, in the order of its violations and their targets.
const Elements = "globalThis.__browsergateAxeElements"

// Bounds of a report: the rules it lists, the elements of each, and the
// longest selector and help text it quotes.
const (
	maxRules    = 40
	maxTargets  = 10
	maxSelector = 200
	maxHelp     = 200
)

// Result is what Run gives.
type Result struct {
	Violations []Violation `json:"violations"`
	Passes     int         `json:"passes"`
	Incomplete int         `json:"incomplete"`
	// Refs are the snapshot refs of the elements of Elements, in its
	// order ("" for one the latest snapshot has no ref for), when the
	// caller looked them up.
	Refs []string `json:"-"`
	// Frames are the URLs of the frames whose audits were added
	// (AddFrame), in order; Skipped counts the frames not audited, and
	// why names the first reason.
	Frames  []string `json:"-"`
	Skipped int      `json:"-"`
	why     string
}

// AddFrame adds the audit of a frame of the page (at url) to r: its
// violations after the page's own, each selector prefixed with the
// frame's number in Frames ("frame 1 >>> "); its passes and reviews
// counted with the page's.
func (r *Result) AddFrame(url string, f *Result) {
	r.Frames = append(r.Frames, url)
	prefix := fmt.Sprintf("frame %d >>> ", len(r.Frames))
	for _, v := range f.Violations {
		targets := make([]string, len(v.Targets))
		for i, t := range v.Targets {
			targets[i] = prefix + t
		}
		v.Targets = targets
		r.Violations = append(r.Violations, v)
	}
	r.Passes += f.Passes
	r.Incomplete += f.Incomplete
}

// SkipFrame counts a frame not audited, and why (the first reason is
// told).
func (r *Result) SkipFrame(why string) {
	r.Skipped++
	if r.why == "" {
		r.why = why
	}
}

// Violation is one rule the page breaks: its axe id, impact (critical,
// serious, moderate, minor), what it asks for, how many elements break it
// and the selectors of the first of them.
type Violation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Count   int      `json:"count"`
	Targets []string `json:"targets"`
}

// Parse reads Run's JSON text.
func Parse(raw string) (*Result, error) {
	var r Result
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("read the accessibility audit's result: %w", err)
	}
	return &r, nil
}

// impacts orders the impacts, the gravest first.
var impacts = []string{"critical", "serious", "moderate", "minor"}

func impactRank(s string) int {
	if i := slices.Index(impacts, s); i >= 0 {
		return i
	}
	return len(impacts)
}

// Text is the report: a line of counts, then each rule broken, the
// gravest first, with its elements' refs (when known) and selectors
// (bounded). What it quotes comes from the page.
func (r *Result) Text() string {
	type rule struct {
		Violation
		refs []string
	}
	var rules []rule
	next := 0
	for _, x := range r.Violations {
		ru := rule{Violation: x}
		for range x.Targets {
			ref := ""
			if next < len(r.Refs) {
				ref = r.Refs[next]
			}
			ru.refs = append(ru.refs, ref)
			next++
		}
		rules = append(rules, ru)
	}
	slices.SortStableFunc(rules, func(a, b rule) int {
		if d := impactRank(a.Impact) - impactRank(b.Impact); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	var b strings.Builder
	broken := map[string]bool{}
	for _, x := range rules {
		broken[x.ID] = true
	}
	fmt.Fprintf(&b, "accessibility audit (axe-core %s): %d rule(s) broken, %d passed, %d need a human's review", Version, len(broken), r.Passes, r.Incomplete)
	if len(r.Frames) > 0 {
		fmt.Fprintf(&b, " (the page and %d frame(s): %s)", len(r.Frames), r.frameList())
	}
	if r.Skipped > 0 {
		fmt.Fprintf(&b, "; %d frame(s) not audited (%s)", r.Skipped, clip(r.why, maxHelp))
	}
	b.WriteString("\n")
	for i, x := range rules {
		if i == maxRules {
			fmt.Fprintf(&b, "… and %d more rule(s) broken\n", len(rules)-maxRules)
			break
		}
		fmt.Fprintf(&b, "- %s (%s, %d element(s)): %s\n", clip(x.ID, 64), clip(x.Impact, 16), x.Count, clip(x.Help, maxHelp))
		shown := min(len(x.Targets), maxTargets)
		for j, t := range x.Targets[:shown] {
			if x.refs[j] != "" {
				fmt.Fprintf(&b, "    %s %s\n", x.refs[j], clip(t, maxSelector))
			} else {
				fmt.Fprintf(&b, "    %s\n", clip(t, maxSelector))
			}
		}
		if x.Count > shown {
			fmt.Fprintf(&b, "    … and %d more\n", x.Count-shown)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// frameList numbers the frames audited, with their URLs (clipped).
func (r *Result) frameList() string {
	parts := make([]string, len(r.Frames))
	for i, u := range r.Frames {
		parts[i] = fmt.Sprintf("frame %d %s", i+1, clip(u, maxSelector))
	}
	return strings.Join(parts, ", ")
}

// clip cuts s to at most n bytes on a rune boundary, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

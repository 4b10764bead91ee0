package a11y_test

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/a11y"
)

func TestVendoredAxeIsUnmodified(t *testing.T) {
	sum := sha256.Sum256([]byte(a11y.Source))
	if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); got != a11y.SRI {
		t.Fatalf("axe/axe.min.js is %s, want axe-core %s as published (%s)", got, a11y.Version, a11y.SRI)
	}
	if !strings.HasPrefix(a11y.Source, "/*! axe v"+a11y.Version) {
		t.Errorf("axe/axe.min.js does not begin with its version %s", a11y.Version)
	}
}

func TestTextListsTheGravestRulesFirstWithinBounds(t *testing.T) {
	targets := make([]string, 12)
	for i := range targets {
		targets[i] = "li:nth-child(" + string(rune('a'+i)) + ") > a"
	}
	r, err := a11y.Parse(`{"violations":[
		{"id":"region","impact":"moderate","help":"All page content should be contained by landmarks","count":1,"targets":["p"]},
		{"id":"image-alt","impact":"critical","help":"Images must have alternative text","count":2,"targets":["img#logo","img.hero"]},
		{"id":"link-name","impact":"serious","help":"Links must have discernible text","count":30,"targets":["` + strings.Join(targets, `","`) + `"]}],
		"passes":17,"incomplete":2}`)
	if err != nil {
		t.Fatal(err)
	}
	r.Refs = []string{"", "e3", ""} // region's p has none; image-alt's logo is e3
	text := r.Text()
	if !strings.Contains(text, "    e3 img#logo\n    img.hero") {
		t.Errorf("the logo's ref is not beside its selector:\n%s", text)
	}
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "accessibility audit (axe-core "+a11y.Version+"): 3 rule(s) broken, 17 passed, 2 need a human's review") {
		t.Errorf("first line %q", lines[0])
	}
	at := func(s string) int { return strings.Index(text, s) }
	if !(at("- image-alt (critical, 2 element(s))") < at("- link-name (serious") && at("- link-name (serious") < at("- region (moderate")) {
		t.Errorf("rules not gravest first:\n%s", text)
	}
	if strings.Contains(text, targets[10]) || !strings.Contains(text, targets[9]) || !strings.Contains(text, "… and 20 more") {
		t.Errorf("link-name's elements not cut at 10 with the rest counted:\n%s", text)
	}
	if _, err := a11y.Parse("not json"); err == nil {
		t.Error("Parse accepted text that is not JSON")
	}
}

// TestFramesAreNumberedAndCountedOnce: a frame's violations follow the
// page's, their selectors prefixed with the frame's number, a rule broken
// in both counts once in the header, and the frames skipped are counted
// with the first reason.
func TestFramesAreNumberedAndCountedOnce(t *testing.T) {
	r := &a11y.Result{Violations: []a11y.Violation{{ID: "label", Impact: "critical", Help: "labels", Count: 1, Targets: []string{"#a"}}}, Passes: 3}
	r.AddFrame("http://f.test/", &a11y.Result{Violations: []a11y.Violation{{ID: "label", Impact: "critical", Help: "labels", Count: 1, Targets: []string{"#b"}}}, Passes: 2, Incomplete: 1})
	r.SkipFrame("outside the scope")
	r.SkipFrame("went away")
	text := r.Text()
	for _, want := range []string{"1 rule(s) broken, 5 passed, 1 need a human's review (the page and 1 frame(s): frame 1 http://f.test/); 2 frame(s) not audited (outside the scope)",
		"    #a\n", "    frame 1 >>> #b"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
}

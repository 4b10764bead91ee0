package replay

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

func TestCompareStep(t *testing.T) {
	t.Parallel()
	rec := func(cmd string, allowed bool, stage evidence.Stage, url, title, out, errText string) *evidence.Envelope {
		return &evidence.Envelope{Command: cmd, Decision: evidence.Decision{Allowed: allowed, Stage: stage},
			After: map[string]any{"url": url, "title": title}, OutputSHA256: out, Error: errText}
	}
	withOutput := func(e *evidence.Envelope, out string) *evidence.Envelope { e.Output = out; return e }
	truncated := func(e *evidence.Envelope) *evidence.Envelope { e.OutputTruncated = true; return e }
	want := withOutput(rec("navigate", true, "gate", "http://a/", "A", "aaaaaaaaaaaaaaaa", ""), "line 1\nline 2\n")
	for _, tc := range []struct {
		name string
		got  *evidence.Envelope
		diff []string // substrings, one per expected difference
	}{
		{"same", rec("navigate", true, "gate", "http://a/", "A", "aaaaaaaaaaaaaaaa", ""), nil},
		{"refused now", rec("navigate", false, "scope", "http://a/", "A", "aaaaaaaaaaaaaaaa", ""), []string{"decision: allowed at gate, now refused at scope"}},
		{"an error now", rec("navigate", true, "gate", "http://a/", "A", "aaaaaaaaaaaaaaaa", "timeout"), []string{`error: "", now "timeout"`}},
		{"elsewhere", rec("navigate", true, "gate", "http://b/", "B", "aaaaaaaaaaaaaaaa", ""), []string{`url: "http://a/", now "http://b/"`, `title: "A", now "B"`}},
		{"other output", withOutput(rec("navigate", true, "gate", "http://a/", "A", "bbbbbbbbbbbbbbbb", ""), "line 1\nline 2\n"), []string{"output differs (sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb)"}},
		{"other text", withOutput(rec("navigate", true, "gate", "http://a/", "A", "bbbbbbbbbbbbbbbb", ""), "line 1\nline two\n"),
			[]string{"output: 1 line(s) removed, 1 added (sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb)"}},
		{"other text past what the log keeps", truncated(withOutput(rec("navigate", true, "gate", "http://a/", "A", "bbbbbbbbbbbbbbbb", ""), "line 1\nline 2\n")),
			[]string{"output differs past the part the log keeps of it (sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs := compareStep(want, tc.got)
			if len(diffs) != len(tc.diff) {
				t.Fatalf("compareStep = %q, want %d difference(s)", diffs, len(tc.diff))
			}
			for i, d := range tc.diff {
				if !strings.Contains(diffs[i], d) {
					t.Errorf("difference %d = %q, want it to say %q", i, diffs[i], d)
				}
			}
		})
	}
	// A screenshot's bytes are not expected to repeat, nor a PDF's (it
	// holds the time it was printed).
	for _, cmd := range []string{"screenshot", "save_pdf"} {
		shot := rec(cmd, true, "gate", "http://a/", "A", "aaaa", "")
		if diffs := compareStep(shot, rec(cmd, true, "gate", "http://a/", "A", "bbbb", "")); len(diffs) != 0 {
			t.Errorf("%s output compared: %q", cmd, diffs)
		}
	}
}

func TestNotReplayable(t *testing.T) {
	t.Parallel()
	m := &toolclad.Manifest{Secrets: []*toolclad.Secret{{Name: "GIVEN"}}}
	for _, tc := range []struct {
		args map[string]any
		want string // "" when replayable
	}{
		{map[string]any{"text": "alice", "n": 3}, ""},
		{map[string]any{"text": "<GIVEN>"}, ""},
		{map[string]any{"text": "[masked: password field]"}, `argument "text" was masked`},
		{map[string]any{"text": "user <MISSING> pass"}, "types secret MISSING, and no --secret MISSING"},
	} {
		if got := notReplayable(&evidence.Envelope{Args: tc.args}, m); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("notReplayable(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestRan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    evidence.Decision
		want bool
	}{
		{evidence.Decision{Allowed: true, Stage: "gate"}, true},
		{evidence.Decision{Stage: "final_url"}, true}, // refused after it ran
		{evidence.Decision{Stage: "scope"}, false},
		{evidence.Decision{Stage: "args"}, false},
	} {
		if got := ran(&evidence.Envelope{Decision: tc.d}); got != tc.want {
			t.Errorf("ran(%+v) = %v", tc.d, got)
		}
	}
}

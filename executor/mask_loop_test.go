package executor_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestMaskerIsNoOracleAcrossCalls: the agent's own text comes back as it
// wrote it in the later calls of its session too — the state lines of the
// calls after a navigate show the URL it navigated to — so a right and a
// wrong guess come back alike; the evidence masks the right one.
func TestMaskerIsNoOracleAcrossCalls(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "Zq8-Lm2_Vx7-Kp4"
	t.Setenv("BROWSERGATE_TEST_LOOP_PW", value)
	h := newHarnessFrom(t, fmt.Sprintf(loopManifest, false, 1000)+`
[secrets.PW]
env = "BROWSERGATE_TEST_LOOP_PW"
domains = ["127.0.0.1"]
`)
	state := regexp.MustCompile(`\[state\] .*`)
	seen := func(session, guess string) string {
		var b strings.Builder
		for _, c := range []struct {
			command string
			args    map[string]any
		}{
			{"navigate", map[string]any{"url": h.site + "/login?q=" + guess}},
			{"snapshot", nil},
			{"wait_for", map[string]any{"selector": "body", "timeout_ms": 100}},
		} {
			r := h.call(t, session, c.command, c.args)
			if r.IsError {
				t.Fatalf("%s: %s", c.command, r.Text)
			}
			b.WriteString(state.FindString(r.Text) + "\n")
		}
		return strings.ReplaceAll(b.String(), guess, "GUESS")
	}
	right, wrong := "Zq8-Lm", "Zq8-Lx"
	want := seen("wrong", wrong)
	if strings.Contains(want, "secret") || !strings.Contains(want, "q=GUESS") {
		t.Fatalf("a wrong guess does not come back as written:\n%s", want)
	}
	if got := seen("right", right); got != want {
		t.Errorf("a right guess comes back otherwise than a wrong one:\n%s\nwant:\n%s", got, want)
	}
	for _, rec := range h.records(t) {
		if strings.Contains(fmt.Sprint(rec.Args, rec.Before, rec.After, rec.Output), right) {
			t.Errorf("the evidence shows the right guess: %+v", rec)
		}
	}
}

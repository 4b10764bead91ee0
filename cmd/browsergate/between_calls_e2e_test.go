package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
)

// TestBetweenCallsEvidenceIsKept: what the egress gate refuses of the
// pages' own requests between calls stays in the evidence.
//
//   - A page that makes one telling refused request and then floods 1,100
//     more before the next call: the record of that call keeps the first
//     (the earliest are kept, the rest counted in blocked_dropped), and
//     the reply says how many the record does not list.
//   - A page that makes a refused request after the session's last call:
//     when the client goes and the session ends, it is written in a record
//     of its own (kind session_end), which verifies, exports, shows and is
//     skipped by replay.
func TestBetweenCallsEvidenceIsKept(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	const flood = 1100
	site, _ := serveLogged(t, map[string]string{
		"/flood": `<title>flood</title><script>setTimeout(() => {
  fetch('` + f.canaryTo + `/first-marker-between').catch(() => {});
  setTimeout(() => { for (let i = 0; i < ` + fmt.Sprint(flood) + `; i++) fetch('` + f.canaryTo + `/flood-' + i).catch(() => {}); }, 300);
}, 1500);</script>flood`,
		"/last": `<title>last</title><script>setTimeout(() => fetch('` + f.canaryTo + `/last-marker-between').catch(() => {}), 1500);</script>last`,
	})

	// (a) One telling refusal, then a flood, between two calls.
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/flood"}); strings.Contains(out, "marker-between") {
		t.Fatalf("the page's timer fired during the navigate call; the test needs it later:\n%s", out)
	}
	// Every refusal is logged as it happens: wait for all of them.
	testkit.Eventually(t, func() string {
		log := f.stderr.String()
		if n := strings.Count(log, "/flood-"); !strings.Contains(log, "first-marker-between") || n < flood {
			return fmt.Sprintf("the daemon logged %d of the %d refusals of the flood", n, flood)
		}
		return ""
	})
	out := f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(out, fmt.Sprintf("egress gate blocked %d request(s) (%d made by the pages themselves since the previous call)", flood+1, flood+1)) ||
		!strings.Contains(out, "first-marker-between") ||
		!strings.Contains(out, fmt.Sprintf("the evidence record lists the first 1000 and counts the other %d (blocked_dropped)", flood+1-1000)) {
		t.Errorf("the reply does not report the refusals between calls and how many the record does not list:\n%s", out[max(0, strings.LastIndex(out, "\n[egress")):])
	}

	// (b) A refusal after the last call; then the client goes.
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/last"}); strings.Contains(out, "last-marker-between") {
		t.Fatalf("the page's timer fired during the navigate call; the test needs it later:\n%s", out)
	}
	testkit.Eventually(t, func() string {
		if !strings.Contains(f.stderr.String(), "last-marker-between") {
			return "the request after the last call was not refused (or not logged)"
		}
		return ""
	})
	// Closing stdin ends the MCP session and then the daemon, which waits
	// for the evidence of the ended session before it closes the log;
	// Close returns when the daemon has exited.
	f.cs.Close()

	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, export)
	}
	var recs []*evidence.Envelope
	for _, line := range strings.Split(strings.TrimSpace(export), "\n") {
		var e evidence.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		recs = append(recs, &e)
	}
	if len(recs) != 4 {
		t.Fatalf("the export has %d records, want navigate, snapshot, navigate and session_end:\n%s", len(recs), export)
	}
	snap := recs[1]
	if snap.Command != "snapshot" || len(snap.Blocked) != 1000 || snap.BlockedDropped != flood+1-1000 {
		t.Fatalf("the snapshot record keeps %d refusals and counts %d more, want 1000 and %d", len(snap.Blocked), snap.BlockedDropped, flood+1-1000)
	}
	if b := snap.Blocked[0]; !strings.HasSuffix(b.URL, "/first-marker-between") || !b.Between {
		t.Errorf("the first refusal between calls is not the first kept: %+v", b)
	}
	if !strings.Contains(export, `"blocked_dropped":101`) {
		t.Errorf("the export does not say how many refusals the snapshot record does not list")
	}
	end := recs[3]
	if end.Kind != evidence.KindSessionEnd || end.Session != recs[0].Session || end.Seq != 4 || end.Decision.Allowed ||
		end.Decision.Stage != evidence.StageEgress || len(end.Blocked) != 1 ||
		!strings.HasSuffix(end.Blocked[0].URL, "/last-marker-between") || !end.Blocked[0].Between {
		t.Fatalf("the session_end record: %+v", end)
	}
	if !strings.Contains(strings.Join(end.Decision.Reasons, " "), "the session ended") {
		t.Errorf("the session_end record does not say why it was written: %q", end.Decision.Reasons)
	}

	if out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence); code != 0 || !strings.Contains(out, "4 record(s)") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	if out, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence); !strings.Contains(out, "#4 ") ||
		!strings.Contains(out, "[session_end]  DENY egress: refused after the last call") {
		t.Errorf("show does not list the session_end record:\n%s", out)
	}
	out, _ = runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", end.Session)
	if !strings.Contains(out, "[session_end]") || !strings.Contains(out, "not a call: 1 request(s)") ||
		!strings.Contains(out, "step(s) that ran") || strings.Contains(out, "changed configuration") {
		t.Errorf("replay does not pass over the session_end record:\n%s", out)
	}
	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("the canary saw %d request(s)", n)
	}
}

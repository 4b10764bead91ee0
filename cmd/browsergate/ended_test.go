package main

import (
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/fleet"
)

// TestTheFleetsRecordEndsOnlyTheSessionsItNames: a record of an expired
// lease ends the log's sessions its MCP session opened, and no other of
// its agent's: r1 killed with alice's session S0 open, started again at
// once on its file, and alice's new session S1, live after S0's lease
// expired, is not shown as ended by it.
func TestTheFleetsRecordEndsOnlyTheSessionsItNames(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	ended := []fleet.Ended{{LogID: "L", Session: "mcp-S0", Lease: "l0", Replica: "r1", Agent: "alice", Evidence: []string{"S0"},
		Expired: t0.Add(30 * time.Second), Swept: t0.Add(31 * time.Second), SweptBy: "r2", Reason: "its replica r1 stopped renewing its lease"}}
	notes := endedNotes(ended)
	session := func(id string, from time.Duration) []string {
		recs := []*evidence.Envelope{{Session: id, Principal: "alice", Time: t0.Add(from)}, {Session: id, Principal: "alice", Time: t0.Add(from + time.Second)}}
		return notes(evidence.SessionSummary{ID: id, First: recs[0].Time, Last: recs[1].Time}, recs)
	}
	if got := session("S1", 5*time.Second); len(got) != 1 || !strings.HasPrefix(got[0], "open: ") {
		t.Errorf("alice's live session S1: %q, want open", got)
	}
	if got := session("S0", -time.Minute); len(got) == 0 || !strings.HasPrefix(got[0], "ended (the fleet's record") || !strings.Contains(got[0], "MCP session mcp-S0") {
		t.Errorf("the session S0 the record names: %q, want ended by it", got)
	}
}

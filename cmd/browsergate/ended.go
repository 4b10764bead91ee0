package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/fleet"
)

// The fleet's records of sessions that ended as their leases expired
// (fleet.Ended: a replica stopped renewing them, killed or cut off) are
// not records of a log: no hash chain holds them. evidence show and
// verify --store print them beside the log, as the fleet's statement.
//
// A record names an MCP session and the sessions of the log it opened
// (fleet.Ended.Evidence: its replica noted each as it opened it). A log's
// session named by a record and left open in the store (no session_end
// record, or only the one a restarted daemon writes for a session it died
// in, evidence.RuleDaemonDied) is shown as ended by it.

// endedNotes are the lines show prints under each session of a central
// store's log about its end: the fleet's records that match it, or that
// the store holds no end of it.
func endedNotes(ended []fleet.Ended) func(evidence.SessionSummary, []*evidence.Envelope) []string {
	return func(s evidence.SessionSummary, recs []*evidence.Envelope) []string {
		if len(recs) == 0 || !leftOpen(recs) {
			return nil
		}
		var by []fleet.Ended
		for _, e := range ended {
			if slices.Contains(e.Evidence, s.ID) {
				by = append(by, e)
			}
		}
		if len(by) == 0 {
			if recs[len(recs)-1].Kind == evidence.KindSessionEnd {
				return nil // ended by a restarted daemon's record alone
			}
			return []string{"open: the store holds no end of it (its replica may be running it still, or has not shipped its end yet)"}
		}
		out := []string{endedLine(by)}
		if last := lastCall(recs); !last.IsZero() && last.After(by[0].Expired) {
			out = append(out, fmt.Sprintf("note: it has calls recorded after the lease expired (the last at %s): it went on after that", last.UTC().Format(time.RFC3339Nano)))
		}
		return out
	}
}

// endedLine says that a session ended as the lease of its MCP session
// expired (by: the fleet's records that name it; one, as an evidence
// session belongs to one MCP session).
func endedLine(by []fleet.Ended) string {
	e := by[0]
	return fmt.Sprintf("ended (the fleet's record, outside the log's hash chains): MCP session %s of replica %s, lease expired %s (recorded by replica %s): %s",
		e.Session, e.Replica, stamp(e.Expired), e.SweptBy, e.Reason)
}

// leftOpen says whether the store holds no end of a session, or only the
// one a restarted daemon recorded for the session it died in.
func leftOpen(recs []*evidence.Envelope) bool {
	last := recs[len(recs)-1]
	return last.Kind != evidence.KindSessionEnd || last.Decision.Rule == evidence.RuleDaemonDied
}

// lastCall is the time of a session's last call record (zero: none).
func lastCall(recs []*evidence.Envelope) time.Time {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == "" {
			return recs[i].Time
		}
	}
	return time.Time{}
}

// stamp is a time as the notes print it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// writeEnded prints, after a log's verification, the fleet's records of
// its sessions that ended as their leases expired, or why they could not
// be read (err).
func writeEnded(w io.Writer, ended []fleet.Ended, err error) {
	if err != nil {
		fmt.Fprintln(w, "note: the fleet's records of this log's sessions that ended as their leases expired could not be read (they are no part of the log's verification):", evidence.Visible(err.Error()))
		return
	}
	if len(ended) == 0 {
		return
	}
	fmt.Fprintf(w, "note: the fleet recorded %d MCP session(s) of this log as ended as their leases expired (its statement, outside the hash chains; evidence show lists them):\n", len(ended))
	for _, e := range ended {
		opened := "it opened no session of the log its replica noted"
		if len(e.Evidence) > 0 {
			opened = "it opened the log's session(s) " + strings.Join(e.Evidence, ", ")
		}
		fmt.Fprintf(w, "  %s\n", evidence.VisibleLine(fmt.Sprintf("MCP session %s, agent %s, replica %s: lease expired %s: %s; %s", e.Session, e.Agent, e.Replica, stamp(e.Expired), e.Reason, opened)))
	}
}

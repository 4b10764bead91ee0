package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLostReplicasSessionsRecordedAsEnded: two replicas on one store
// (--evidence-ack central, --session-lease 3s). r1, with a session of
// alice and one of bob, is killed (-9) and its evidence file deleted:
// without any session being opened, r2's renewal rounds record that r1's
// sessions ended as their leases expired, and `evidence show --store`
// lists each of them as ended, with the reason, the replica and the MCP
// session, while r2's own session shows open (read with a role that may
// only SELECT); `evidence verify --store`
// still passes, and names the fleet's records as its statement. Then r2
// is killed and started again on its file: its session shows both the
// fleet's record and the session_end record the restarted daemon wrote,
// each once.
func TestLostReplicasSessionsRecordedAsEnded(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})
	writer := store.url
	args := func(id string) []string {
		return []string{"--store", writer, "--replica", id, "--evidence-ack", "central", "--session-lease", "3s"}
	}
	r1 := launchHTTP(t, nil, store.env, inputManifest(), "", args("r1")...)
	r2 := launchHTTP(t, nil, store.env, inputManifest(), "", args("r2")...)
	navigate := func(cs *mcp.ClientSession) {
		t.Helper()
		// A refusal is recorded too: the session is in the log either way.
		callText(t, cs, "e2e.navigate", map[string]any{"url": site + "/"})
	}
	mcpOf := map[string]string{} // agent -> its MCP session on r1
	for _, agent := range []string{"alice", "bob"} {
		cs := r1.connect(t, agent+"-token")
		navigate(cs)
		mcpOf[agent] = cs.ID()
	}
	live := r2.connect(t, "alice-token")
	navigate(live)
	// The evidence commands read as an auditor, whose role may only
	// SELECT.
	store.url = store.pg.AddReader(t, "fleet", "auditor")

	if err := r1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = r1.cmd.Wait()
	if n := store.pg.SQL(t, "fleet", "SELECT count(*) FROM evidence_records r JOIN evidence_logs l USING (log_id) WHERE l.replica = 'r1'"); n != "2" {
		t.Fatalf("the store holds %s records of r1's, want the 2 it acknowledged", n)
	}
	if err := os.Remove(r1.evidence); err != nil {
		t.Fatal(err)
	}

	// No session is opened from here on: only the renewal rounds sweep.
	var notes map[string]map[string][]string
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := store.run(t, "evidence", "show")
		if err != nil {
			t.Fatalf("evidence show --store: %v\n%s", err, out)
		}
		notes = sessionNotes(out)
		if ended(notes["r1"]["alice"]) && ended(notes["r1"]["bob"]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after r1 was killed (leases of 3 s), evidence show --store does not list its 2 sessions as ended:\n%s", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for agent, id := range mcpOf {
		n := notes["r1"][agent][0]
		if !strings.HasPrefix(n, "ended (the fleet's record, outside the log's hash chains): MCP session "+id+" of replica r1, lease expired ") ||
			!strings.Contains(n, "(recorded by replica r2): its replica r1 stopped renewing its lease: killed, or cut off from the store; what its browser did after the last record the store holds is not known") {
			t.Errorf("r1's session of %s (MCP session %s): %q", agent, id, n)
		}
	}
	if n := notes["r2"]["alice"]; len(n) != 1 || !strings.HasPrefix(n[0], "open: the store holds no end of it") {
		t.Errorf("r2's live session: %q, want it open", n)
	}
	out, err := store.run(t, "evidence", "verify")
	if err != nil || strings.Count(out, "every hash chain intact") != 2 ||
		!strings.Contains(out, "note: the fleet recorded 2 MCP session(s) of this log as ended as their leases expired (its statement, outside the hash chains") ||
		!strings.Contains(out, "MCP session "+mcpOf["bob"]+", agent bob, replica r1: lease expired ") {
		t.Fatalf("evidence verify --store: %v\n%s", err, out)
	}

	// r2 killed and started again on its file: the fleet's record of its
	// session, by the new r2's sweep, and its own record of the end.
	if err := r2.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = r2.cmd.Wait()
	launchHTTP(t, nil, store.env, inputManifest(), "", append(args("r2"), "--evidence", r2.evidence)...)
	deadline = time.Now().Add(time.Minute)
	for {
		out, err = store.run(t, "evidence", "show")
		if err != nil {
			t.Fatalf("evidence show --store: %v\n%s", err, out)
		}
		n := sessionNotes(out)["r2"]["alice"]
		if ended(n) && strings.HasPrefix(n[0], "ended (the fleet's record, outside the log's hash chains): MCP session "+live.ID()+" of replica r2") &&
			strings.Count(out, "the daemon stopped without ending it") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after r2 started again on its file, its session does not show both ends once:\n%s", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got := store.pg.SQL(t, "fleet", "SELECT count(*) FROM fleet_ended"); got != "3" {
		t.Errorf("%s records of ended sessions, want 3 (one a session)", got)
	}
	if out, err := store.run(t, "evidence", "verify"); err != nil || strings.Count(out, "every hash chain intact") != 2 {
		t.Fatalf("evidence verify --store after r2's restart: %v\n%s", err, out)
	}
}

// ended says whether a session's notes are one that it ended.
func ended(notes []string) bool {
	return len(notes) == 1 && strings.HasPrefix(notes[0], "ended (")
}

// sessionNotes reads `evidence show --store`: the lines under each
// session's header about its end (ended, open), by replica and agent.
func sessionNotes(out string) map[string]map[string][]string {
	notes := map[string]map[string][]string{}
	var replica, agent string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# log "):
			_, r, _ := strings.Cut(line, "(replica ")
			replica = strings.TrimSuffix(r, ")")
			if notes[replica] == nil {
				notes[replica] = map[string][]string{}
			}
		case strings.HasPrefix(line, "session "):
			_, a, _ := strings.Cut(line, "  agent ")
			agent, _, _ = strings.Cut(a, " ")
		case strings.HasPrefix(line, "  ended (") || strings.HasPrefix(line, "  open: "):
			notes[replica][agent] = append(notes[replica][agent], strings.TrimPrefix(line, "  "))
		}
	}
	return notes
}

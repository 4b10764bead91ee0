package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/internal/testkit/pglab"
	"github.com/browsergate/browsergate/internal/testkit/s3lab"
)

// centralStore is a PostgreSQL cluster with a database for the fleet's
// evidence, and what serve and the evidence commands need to reach it.
type centralStore struct {
	pg  *pglab.Cluster
	url string
	env []string
}

func startCentralStore(t *testing.T) *centralStore {
	t.Helper()
	pg := pglab.Start(t, nil)
	pg.CreateDatabase(t, "fleet")
	return &centralStore{pg: pg, url: pg.URL("fleet"), env: []string{"PGPASSFILE=" + pg.PassFile}}
}

// await waits, at most a minute, until query's answer in the fleet's
// database is want (what: what that means).
func (c *centralStore) await(t *testing.T, query, want, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for c.pg.SQL(t, "fleet", query) != want {
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s (%s is not %s)", what, query, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// run runs an evidence command against the store and returns its output.
func (c *centralStore) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, append(args, "--store", c.url)...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCentralAckLosesNothingWithTheReplicasDisk: a daemon that replies
// only once the central store holds a record (--evidence-ack central) is
// killed and its evidence file lost; every call it answered is in the
// central store, which verifies, shows, exports and replays it; the daemon
// started again on a new file is a second log beside the first.
func TestCentralAckLosesNothingWithTheReplicasDisk(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site, _ := serveLogged(t, map[string]string{
		"/form": `<title>form</title><input id=q aria-label=Query><a href="/next">next</a>`,
		"/next": `<title>next</title><p>the next page</p>`,
	})
	d := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--evidence-ack", "central")
	alice := d.connect(t, "alice-token")
	answered := 0
	for i := range 3 {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"e2e.navigate", map[string]any{"url": site + "/form"}},
			{"e2e.type_text", map[string]any{"selector": "#q", "text": fmt.Sprintf("query %d", i)}},
			{"e2e.snapshot", nil},
		} {
			if out, refused := callText(t, alice, c.tool, c.args); refused {
				t.Fatalf("%s: %s", c.tool, out)
			}
			answered++
		}
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	if err := os.Remove(d.evidence); err != nil {
		t.Fatal(err)
	}

	if got := store.pg.SQL(t, "fleet", "SELECT count(*) FROM evidence_records"); got != fmt.Sprint(answered) {
		t.Fatalf("the central store holds %s records of the %d calls the killed daemon answered", got, answered)
	}
	// The auditor reads with a role that may only SELECT.
	writer := store.url
	store.url = store.pg.AddReader(t, "fleet", "auditor")
	out, err := store.run(t, "evidence", "verify")
	if err != nil || !strings.Contains(out, "ok: 1 session(s), 9 record(s), every hash chain intact") || !strings.Contains(out, "covers every session") {
		t.Fatalf("evidence verify --store: %v\n%s", err, out)
	}
	session := sessionOf(t, store)
	out, err = store.run(t, "evidence", "show", "--session", session)
	if err != nil || strings.Count(out, "type_text") != 3 || !strings.Contains(out, "agent alice") {
		t.Fatalf("evidence show --store --session: %v\n%s", err, out)
	}
	out, err = store.run(t, "evidence", "export", "--session", session)
	if err != nil || len(bytes.Split(bytes.TrimSpace([]byte(out)), []byte("\n"))) != answered {
		t.Fatalf("evidence export --store: %v, want %d lines\n%s", err, answered, out)
	}

	// The daemon again, on a new file: a second log.
	d2 := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", writer, "--evidence-ack", "central")
	if out, refused := callText(t, d2.connect(t, "alice-token"), "e2e.navigate", map[string]any{"url": site + "/next"}); refused {
		t.Fatalf("navigate after the restart: %s", out)
	}
	d2.stop(t)
	out, err = store.run(t, "evidence", "verify")
	if err != nil || strings.Count(out, "every hash chain intact") != 2 || strings.Count(out, "log ") != 2 {
		t.Fatalf("evidence verify --store with two logs: %v\n%s", err, out)
	}
	// A report is of one log: the store holds two, so it needs a session.
	if out, err := store.run(t, "evidence", "export", "--format", "html"); err == nil || !strings.Contains(out, "name a --session") {
		t.Fatalf("export html of a store of two logs without --session: %v\n%s", err, out)
	}

	// Tampering in the store shows.
	store.pg.SQL(t, "fleet", `UPDATE evidence_records SET record = convert_to(replace(convert_from(record, 'UTF8'), 'query 1', 'query 9'), 'UTF8')`)
	if out, err := store.run(t, "evidence", "verify"); err == nil || !strings.Contains(out, "FAIL:") {
		t.Fatalf("evidence verify --store after a record was rewritten in it: %v\n%s", err, out)
	}
}

// sessionOf is the one session the store's first log holds.
func sessionOf(t *testing.T, store *centralStore) string {
	t.Helper()
	ids := store.pg.SQL(t, "fleet", "SELECT DISTINCT session FROM evidence_heads")
	sc := bufio.NewScanner(strings.NewReader(ids))
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if len(out) != 1 {
		t.Fatalf("sessions in the central store: %q, want one", out)
	}
	return out[0]
}

// TestCentralAckWithTheStoreDownWithholdsTheResult: with the central
// store gone, a call under --evidence-ack central acts, is recorded in the
// file, and its result is withheld with an error that says why; once the
// store is back the record is shipped.
func TestCentralAckWithTheStoreDownWithholdsTheResult(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})
	d := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--evidence-ack", "central", "--operator-token-file", operatorFile(t))
	alice := d.connect(t, "alice-token")
	if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
		t.Fatalf("navigate: %s", out)
	}
	store.pg.Stop()
	out, refused := callText(t, alice, "e2e.snapshot", nil)
	if !refused || !strings.Contains(out, "result is withheld") || !strings.Contains(out, "not acknowledged by the central store") {
		t.Fatalf("a call with the central store down: refused %v: %s", refused, out)
	}
	// The operators see it in /metrics.
	_, _, metrics := d.raw(t, "GET", "/metrics", map[string]string{"Authorization": "Bearer " + olga}, "")
	behind, _ := metricGauge(metrics, "browsergate_evidence_unshipped_seconds")
	failures, _ := metricGauge(metrics, "browsergate_evidence_ship_failures")
	if behind <= 0 || failures < 1 {
		t.Errorf("/metrics with the central store down:\n%s", metrics)
	}
	store.pg.Restart(t)
	if out, refused := callText(t, alice, "e2e.snapshot", nil); refused {
		t.Fatalf("a call once the store is back: %s", out)
	}
	if got := store.pg.SQL(t, "fleet", "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM evidence_records"); got != "1,2,3" {
		t.Fatalf("records in the central store once it is back: %s, want 1,2,3", got)
	}
}

// anchoredStore is a central store, a fleet transparency log's key pair
// and a versitygw bucket with Object Lock: the anchor file a daemon runs
// with, and the auditor's, which reads the bucket with the verifier key.
type anchoredStore struct {
	*centralStore
	dir, anchorFile, auditorFile string
	copySection                  string // the anchor files' [copy]
}

func startAnchoredStore(t *testing.T) *anchoredStore {
	t.Helper()
	s3 := s3lab.Start(t)
	store := startCentralStore(t)
	store.env = append(store.env, "AWS_ACCESS_KEY_ID="+s3.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3.SecretKey)
	dir := t.TempDir()
	if out, err := exec.Command(binary, "evidence", "keygen", "--out", filepath.Join(dir, "fleet-log"), "--log", "browsergate.test/fleet-log").CombinedOutput(); err != nil {
		t.Fatalf("keygen --log: %v\n%s", err, out)
	}
	copySection := fmt.Sprintf("\n[copy]\nendpoint = %q\nregion = %q\nbucket = \"fleet-evidence\"\nprefix = \"fleet-log/\"\nretention_days = 1\npath_style = true\n", s3.Endpoint, s3.Region)
	a := &anchoredStore{centralStore: store, dir: dir, anchorFile: filepath.Join(dir, "anchor.toml"), auditorFile: filepath.Join(dir, "auditor.toml"), copySection: copySection}
	if err := os.WriteFile(a.anchorFile, []byte("dir = \"log\"\nkey_file = \"fleet-log.key\"\n"+copySection), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.auditorFile, []byte("verifier_key_file = \"fleet-log.vkey\"\n"+copySection), 0o644); err != nil {
		t.Fatal(err)
	}
	return a
}

// awaitCheckpoint waits until the store publishes a checkpoint of size.
func (a *anchoredStore) awaitCheckpoint(t *testing.T, size int) {
	t.Helper()
	a.await(t, "SELECT coalesce(max(size), 0) FROM evidence_checkpoints", fmt.Sprint(size), "a checkpoint of that size")
}

// TestAnchoredFleetShowsADeletedLog: a daemon with --store and --anchor
// anchors every record in the fleet's transparency log and copies it to
// a bucket under Object Lock; an auditor's evidence verify --central,
// reading the bucket with the verifier key alone, passes and keeps the
// checkpoint; then a whole log deleted from the database — which leaves
// every remaining log verifying by the file's rules — is named.
func TestAnchoredFleetShowsADeletedLog(t *testing.T) {
	t.Parallel()
	a := startAnchoredStore(t)
	store, dir, anchorFile, auditorFile := a.centralStore, a.dir, a.anchorFile, a.auditorFile
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})
	d := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--anchor", anchorFile)
	alice := d.connect(t, "alice-token")
	for range 3 {
		if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
			t.Fatalf("navigate: %s", out)
		}
	}
	// The anchorer runs every second: wait for a checkpoint covering the
	// three records before the daemon stops.
	a.awaitCheckpoint(t, 3)
	d.stop(t)

	kept := filepath.Join(dir, "kept-checkpoint")
	out, err := store.run(t, "evidence", "verify", "--central", "--anchor", auditorFile, "--checkpoint", kept)
	if err != nil || !strings.Contains(out, "checkpoint of size 3") || !strings.Contains(out, "3 anchored, 0 not yet anchored") {
		t.Fatalf("evidence verify --central: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(kept); err != nil || !strings.HasPrefix(string(b), "browsergate.test/fleet-log\n3\n") {
		t.Fatalf("the kept checkpoint: %v %q", err, b)
	}

	store.pg.SQL(t, "fleet", "DELETE FROM evidence_records; DELETE FROM evidence_heads; DELETE FROM evidence_logs")
	out, err = store.run(t, "evidence", "verify", "--central", "--anchor", auditorFile, "--checkpoint", kept)
	if err == nil || !strings.Contains(out, "3 anchored record(s) (seq 1 to 3) are not in the store") {
		t.Fatalf("evidence verify --central after a whole log was deleted from the store: %v\n%s", err, out)
	}
}

// TestAnchoredPruneIsVouchedForBySignature: a signed daemon's session
// pruned from its file (evidence prune, with the signing key) and shipped
// leaves its anchored records without a row; verify --central counts it
// as pruned when the log's signed log-wide head vouches for the prune
// (--pubkey), and fails it without: then only the store's tombstone says
// so, which whoever writes the database could have written.
func TestAnchoredPruneIsVouchedForBySignature(t *testing.T) {
	t.Parallel()
	a := startAnchoredStore(t)
	sign := filepath.Join(a.dir, "sign")
	if out, err := exec.Command(binary, "evidence", "keygen", "--out", sign).CombinedOutput(); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})
	d := launchHTTP(t, nil, a.env, inputManifest(), "", "--store", a.url, "--anchor", a.anchorFile, "--signing-key", sign+".key")
	navigate := func(cs *mcp.ClientSession) {
		t.Helper()
		if out, refused := callText(t, cs, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
			t.Fatalf("navigate: %s", out)
		}
	}
	old := d.connect(t, "alice-token")
	navigate(old)
	navigate(old)
	old.Close()
	time.Sleep(50 * time.Millisecond)
	cut := time.Now()
	navigate(d.connect(t, "alice-token"))
	a.awaitCheckpoint(t, 3)
	d.stop(t)
	prune := exec.Command(binary, "evidence", "prune", "--evidence", d.evidence, "--before", cut.UTC().Format(time.RFC3339Nano), "--signing-key", sign+".key", "--store", a.url)
	prune.Env = append(os.Environ(), a.env...)
	if out, err := prune.CombinedOutput(); err != nil {
		t.Fatalf("prune: %v\n%s", err, out)
	}
	// The daemon started again on its file ships the prune.
	d2 := launchHTTP(t, nil, a.env, inputManifest(), "", "--store", a.url, "--anchor", a.anchorFile, "--signing-key", sign+".key", "--evidence", d.evidence)
	a.await(t, "SELECT count(*) FROM evidence_tombstones", "1", "the prune's tombstone in the store")
	d2.stop(t)
	out, err := a.run(t, "evidence", "verify", "--central", "--anchor", a.auditorFile, "--pubkey", sign+".pub")
	if err != nil || !strings.Contains(out, "1 pruned session(s)") {
		t.Fatalf("verify --central --pubkey after a signed prune: %v\n%s", err, out)
	}
	out, err = a.run(t, "evidence", "verify", "--central", "--anchor", a.auditorFile)
	if err == nil || !strings.Contains(out, "only the store's tombstone says the session was pruned") {
		t.Fatalf("verify --central without --pubkey after a prune: %v\n%s", err, out)
	}
}

// TestAHeldCallIsAnsweredOnAnotherReplica: two replicas sharing a store and
// the operators' token file; a call held for approval on r1 is listed by
// `browsergate approvals list` on r2 (naming r1), approved there, and goes
// ahead on r1, whose evidence records who approved it and on which replica.
func TestAHeldCallIsAnsweredOnAnotherReplica(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	tokens := operatorFile(t)
	manifest := reloadManifest + "[browser.commands.scroll]\nhuman_approval = true\n"
	site, _ := serveLogged(t, map[string]string{"/": `<title>long</title><div style="height:5000px">long</div>`})
	r1 := launchHTTP(t, nil, store.env, manifest, "", "--store", store.url, "--replica", "r1", "--operator-token-file", tokens, "--approval-timeout", "2m")
	r2 := launchHTTP(t, nil, store.env, manifest, "", "--store", store.url, "--replica", "r2", "--operator-token-file", tokens)
	alice := r1.connect(t, "alice-token")
	if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
		t.Fatalf("navigate: %s", out)
	}
	f := &fixture{cs: alice, evidence: r2.evidence}
	h := f.callAsync(t, "e2e.scroll", map[string]any{"direction": "down"})
	id := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); !strings.Contains(out, "r1") {
		t.Errorf("approvals list on r2 does not name the replica holding the call:\n%s", out)
	}
	if out, err := f.approvals(t, "approve", id, "--by", "olga"); err != nil {
		t.Fatalf("approvals approve on r2: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); refused {
		t.Fatalf("the scroll approved on r2 was refused on r1:\n%s", text)
	}
	r1.stop(t)
	out, err := exec.Command(binary, "evidence", "show", "--evidence", r1.evidence).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "olga") || !strings.Contains(string(out), "replica r2") {
		t.Fatalf("r1's evidence of the approval given on r2: %v\n%s", err, out)
	}
}

// TestASessionItsDaemonDiedInIsRecordedAsEnded: a daemon killed (-9) with
// a session open, started again on its evidence file, records that
// session's end — the daemon died in it — before serving; a session its
// client ended before the kill gets no such record. The records ship to
// the central store like any.
func TestASessionItsDaemonDiedInIsRecordedAsEnded(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})
	d := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url)
	closed := d.connect(t, "bob-token")
	if out, refused := callText(t, closed, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
		t.Fatalf("navigate: %s", out)
	}
	closed.Close()
	open := d.connect(t, "alice-token")
	if out, refused := callText(t, open, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
		t.Fatalf("navigate: %s", out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for store.pg.SQL(t, "fleet", "SELECT count(*) FROM evidence_records") != "2" {
		if time.Now().After(deadline) {
			t.Fatal("the two calls never reached the central store")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	again := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--evidence", d.evidence)
	again.stop(t)
	out, err := exec.Command(binary, "evidence", "show", "--evidence", d.evidence).CombinedOutput()
	if err != nil || strings.Count(string(out), "the daemon stopped without ending it") != 1 {
		t.Fatalf("evidence show after the restart: %v, want one session ended by its daemon's death\n%s", err, out)
	}
	if got := store.pg.SQL(t, "fleet", "SELECT count(*) FROM evidence_records WHERE convert_from(record, 'UTF8') LIKE '%the daemon stopped without ending it%'"); got != "1" {
		t.Fatalf("%s records of the death in the central store, want 1", got)
	}
}

// TestPruneOfAShippedFileWaitsForTheStore: a file serve --store shipped is
// pruned only with --store, and only once the store holds every session
// to remove whole: a session whose records were answered while the store
// was down is named and nothing is removed; once the daemon, started again
// on the file, has shipped it, the prune goes through and the shipping
// goes on after it.
func TestPruneOfAShippedFileWaitsForTheStore(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})
	d := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url)
	alice := d.connect(t, "alice-token") // opened while the store is up: its lease is taken
	store.pg.Stop()
	for range 2 {
		if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
			t.Fatalf("navigate with the store down (acknowledged locally): %s", out)
		}
	}
	alice.Close()
	time.Sleep(50 * time.Millisecond)
	before := time.Now().UTC().Format(time.RFC3339Nano)
	d.stop(t)
	prune := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"evidence", "prune", "--evidence", d.evidence, "--before", before}, args...)...)
		cmd.Env = append(os.Environ(), store.env...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := prune(); code != 2 || !strings.Contains(out, "this file ships to the central store postgres://") || !strings.Contains(out, "give --store URL") {
		t.Fatalf("prune of a shipped file without --store: exit %d\n%s", code, out)
	}
	store.pg.Restart(t)
	if out, code := prune("--store", store.url); code != 1 || !strings.Contains(out, "nothing was removed: the central store does not hold 1 of the sessions to remove whole") ||
		!strings.Contains(out, "(the store has 0 of its 2 records, not its head as the file has it, not its config/") {
		t.Fatalf("prune before the session shipped: exit %d\n%s", code, out)
	}
	// Started again on its file, the daemon ships the session.
	d2 := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--evidence", d.evidence)
	store.await(t, "SELECT count(*) FROM evidence_records", "2", "the session shipped")
	d2.stop(t)
	if out, code := prune("--store", store.url); code != 0 || !strings.Contains(out, "removed session ") {
		t.Fatalf("prune once shipped: exit %d\n%s", code, out)
	}
	// The prune ships too, and the store still verifies.
	d3 := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--evidence", d.evidence)
	store.await(t, "SELECT count(*) FROM evidence_tombstones", "1", "the prune shipped")
	d3.stop(t)
	if out, err := store.run(t, "evidence", "verify"); err != nil {
		t.Fatalf("verify --store after the prune: %v\n%s", err, out)
	}
}

// TestAnAnchorerTakingOverRestoresTheLogFromItsBucket: two replicas with
// --anchor, each with a log directory of its own; the anchoring one is
// killed (-9) and the other takes the lock, restores the log from the
// bucket into its empty directory and anchors its own calls after the
// first replica's. The auditor's evidence verify --central, reading the
// bucket and every checkpoint version it keeps, passes over all of them.
func TestAnAnchorerTakingOverRestoresTheLogFromItsBucket(t *testing.T) {
	t.Parallel()
	a := startAnchoredStore(t)
	store, dir, copySection := a.centralStore, a.dir, a.copySection
	anchorFile := func(name, logDir string) string {
		p := filepath.Join(dir, name)
		doc := fmt.Sprintf("dir = %q\nkey_file = \"fleet-log.key\"\ncheckpoint_interval = \"200ms\"\nanchor_every = \"100ms\"\nround_timeout = \"3s\"\n%s", logDir, copySection)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	auditorFile := a.auditorFile
	anchored := func(n int) {
		t.Helper()
		store.await(t, "SELECT count(*) FILTER (WHERE leaf IS NOT NULL) || '/' || count(*) || '/' || (SELECT coalesce(max(size), 0) FROM evidence_checkpoints) FROM evidence_records",
			fmt.Sprintf("%d/%d/%d", n, n, n), fmt.Sprintf("%d records anchored under a published checkpoint", n))
	}
	site, _ := serveLogged(t, map[string]string{"/": `<title>home</title><p>home</p>`})

	r1 := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--replica", "r1", "--anchor", anchorFile("r1.toml", "log-r1"))
	// r1 publishes a checkpoint (of size 0) once it holds the lock: r2,
	// started after, waits for it.
	store.await(t, "SELECT count(*) > 0 FROM evidence_checkpoints", "t", "r1 anchoring")
	r2 := launchHTTP(t, nil, store.env, inputManifest(), "", "--store", store.url, "--replica", "r2", "--anchor", anchorFile("r2.toml", "log-r2"))
	alice := r1.connect(t, "alice-token")
	for range 3 {
		if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
			t.Fatalf("navigate on r1: %s", out)
		}
	}
	anchored(3)
	if err := r1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = r1.cmd.Wait()

	bob := r2.connect(t, "bob-token")
	for range 2 {
		if out, refused := callText(t, bob, "e2e.navigate", map[string]any{"url": site + "/"}); refused {
			t.Fatalf("navigate on r2: %s", out)
		}
	}
	anchored(5)
	r2.stop(t)
	if b, err := os.ReadFile(filepath.Join(dir, "log-r2", "checkpoint")); err != nil || !strings.HasPrefix(string(b), "browsergate.test/fleet-log\n5\n") {
		t.Fatalf("r2's own log directory: %v %q; want the log restored and grown to 5 leaves", err, b)
	}
	out, err := store.run(t, "evidence", "verify", "--central", "--anchor", auditorFile)
	if err != nil || !strings.Contains(out, "checkpoint of size 5") || !strings.Contains(out, "5 anchored, 0 not yet anchored") {
		t.Fatalf("evidence verify --central after the takeover: %v\n%s", err, out)
	}
}

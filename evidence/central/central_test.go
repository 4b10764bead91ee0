package central_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// fleet is a central store in a new PostgreSQL cluster and an evidence
// file to ship from.
type fleet struct {
	pg      *pglab.Cluster
	db      string
	central *central.Store
	local   *evidence.Store
	path    string
}

func TestMain(m *testing.M) {
	// Tessera logs through klog, to stderr by default.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	code := m.Run()
	pglab.StopShared()
	os.Exit(code)
}

// newFleet is a fleet in a database of the package's shared cluster.
func newFleet(t *testing.T) *fleet {
	t.Helper()
	pg, db := pglab.Shared(t)
	return fleetIn(t, pg, db)
}

// newFleetAlone is a fleet in a cluster of its own, which the test may
// stop.
func newFleetAlone(t *testing.T) *fleet {
	t.Helper()
	pg := pglab.Start(t, nil)
	pg.CreateDatabase(t, "evidence")
	return fleetIn(t, pg, "evidence")
}

func fleetIn(t *testing.T, pg *pglab.Cluster, db string) *fleet {
	t.Helper()
	c, err := central.Open(context.Background(), pg.URLWithPassword(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fleet{pg: pg, db: db, central: c, path: filepath.Join(t.TempDir(), "evidence.db")}
	if f.local, err = evidence.Open(f.path, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.local.Close() })
	return f
}

// call appends a call of session to the local file, with a screenshot
// when shot is set.
func (f *fleet) call(t *testing.T, session, url string, shot string) *evidence.Envelope {
	t.Helper()
	cfg, err := f.local.PutConfig([]byte(`{"manifest":"` + session + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	e := &evidence.Envelope{Session: session, Principal: "alice", Tool: "web", Command: "navigate",
		Args: map[string]any{"url": url}, Decision: evidence.Decision{Allowed: true, Stage: "gate"},
		Output: "navigated to " + url, ConfigSHA256: cfg}
	var png []byte
	if shot != "" {
		png = []byte(shot)
	}
	if err := f.local.Append(e, png); err != nil {
		t.Fatal(err)
	}
	return e
}

func (f *fleet) shipper(t *testing.T) *central.Shipper {
	t.Helper()
	s, err := central.NewShipper(context.Background(), f.local, f.central, "r1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// verifyCentral assembles the log from the central store and verifies it.
func (f *fleet) verifyCentral(t *testing.T) (*evidence.Report, central.Assembled) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "assembled.db")
	got, err := f.central.AssembleLog(context.Background(), f.local.LogID(), path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify()
	if err != nil {
		t.Fatal(err)
	}
	return rep, got
}

func (f *fleet) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	out := f.pg.SQL(t, f.db, "SELECT count(*) FROM "+table)
	fmt.Sscan(out, &n)
	return n
}

func TestShippedLogVerifiesAsTheFile(t *testing.T) {
	f := newFleet(t)
	f.call(t, "s1", "https://a.example/", "png-1")
	f.call(t, "s1", "https://a.example/2", "")
	f.call(t, "s2", "https://b.example/", "png-1")
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, got := f.verifyCentral(t)
	if !rep.OK() || got.Ahead != 0 {
		t.Fatalf("the central copy does not verify: %v (ahead %d)", rep.Problems, got.Ahead)
	}
	if rep.LogHead == nil || rep.LogHead.Sessions != 2 || rep.LogHead.Records != 3 {
		t.Fatalf("log-wide head of the central copy = %+v, want 2 sessions and 3 records", rep.LogHead)
	}
	if n := f.count(t, "evidence_records"); n != 3 {
		t.Fatalf("%d records in the central store, want 3", n)
	}
	if n := f.count(t, "evidence_blobs WHERE kind = 'screenshot'"); n != 1 {
		t.Fatalf("%d screenshots in the central store, want the one both records name", n)
	}
}

func TestShippingAgainAddsNothing(t *testing.T) {
	f := newFleet(t)
	f.call(t, "s1", "https://a.example/", "")
	f.call(t, "s1", "https://a.example/2", "")
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The same batch again, as a shipper that crashed after the commit
	// would send it: it knows nothing of what the store took.
	b, err := f.local.NextBatch(evidence.NewShipped(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 2 {
		t.Fatalf("a batch from nothing has %d records, want 2", len(b.Records))
	}
	if err := f.central.Ship(context.Background(), "r1", b); err != nil {
		t.Fatalf("shipping an acknowledged batch again: %v", err)
	}
	// A shipper that starts anew finds nothing to ship.
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.count(t, "evidence_records"); n != 2 {
		t.Fatalf("%d records in the central store after shipping twice, want 2", n)
	}
	if rep, _ := f.verifyCentral(t); !rep.OK() {
		t.Fatal(rep.Problems)
	}
}

func TestARecordThatDiffersIsRefused(t *testing.T) {
	f := newFleet(t)
	f.call(t, "s1", "https://a.example/", "")
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := f.local.NextBatch(evidence.NewShipped(), 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Records[0].Raw = []byte(strings.Replace(string(b.Records[0].Raw), "a.example", "evil.example", 1))
	err = f.central.Ship(context.Background(), "r1", b)
	if !errors.Is(err, central.ErrConflict) {
		t.Fatalf("shipping a different record under the same key: %v, want ErrConflict", err)
	}
	if got := f.pg.SQL(t, f.db, "SELECT position('evil' in convert_from(record, 'UTF8')) FROM evidence_records"); got != "0" {
		t.Fatal("the different record replaced the one held")
	}
}

func TestCentralCopyShowsWhatWasTamperedWith(t *testing.T) {
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"a record rewritten", `UPDATE evidence_records SET record = convert_to(replace(convert_from(record, 'UTF8'), 'b.example', 'c.example'), 'UTF8') WHERE session = 's2'`, "hash"},
		{"a session deleted", `DELETE FROM evidence_records WHERE session = 's1'; DELETE FROM evidence_heads WHERE session = 's1'`, "missing"},
		{"a session rolled back", `DELETE FROM evidence_records WHERE session = 's1' AND seq = 2; UPDATE evidence_heads h SET head = convert_to(json_build_object('hash', r.hash, 'seq', 1)::text, 'UTF8') FROM evidence_records r WHERE h.session = 's1' AND r.session = 's1' AND r.seq = 1`, "records cut from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t)
			f.call(t, "s1", "https://a.example/", "")
			f.call(t, "s1", "https://a.example/2", "")
			f.call(t, "s2", "https://b.example/", "")
			if err := f.shipper(t).Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			f.pg.SQL(t, f.db, tc.sql)
			rep, _ := f.verifyCentral(t)
			if rep.OK() {
				t.Fatal("the tampered central copy verifies")
			}
			var all []string
			for _, p := range rep.Problems {
				all = append(all, p.String())
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Fatalf("problems do not say %q:\n%s", tc.want, strings.Join(all, "\n"))
			}
		})
	}
}

func TestAcknowledgeWaitsForTheCentralStore(t *testing.T) {
	f := newFleetAlone(t)
	s := f.shipper(t)
	s.AckTimeout = 2 * time.Second
	f.local.SetAcknowledge(s.Acknowledge)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	e := f.call(t, "s1", "https://a.example/", "")
	if got := f.pg.SQL(t, f.db, fmt.Sprintf("SELECT count(*) FROM evidence_records WHERE session = 's1' AND seq = %d", e.Seq)); got != "1" {
		t.Fatal("Append returned before the central store held the record")
	}

	f.pg.Stop()
	e2 := &evidence.Envelope{Session: "s1", Principal: "alice", Tool: "web", Command: "snapshot", Decision: evidence.Decision{Allowed: true, Stage: "gate"}}
	err := f.local.Append(e2, nil)
	if !errors.Is(err, evidence.ErrNotAcknowledged) {
		t.Fatalf("Append with the central store down: %v, want ErrNotAcknowledged", err)
	}
	if e2.Seq != 2 {
		t.Fatalf("the record not acknowledged has seq %d, want it kept in the file as 2", e2.Seq)
	}
	f.pg.Restart(t)
	e3 := f.call(t, "s1", "https://a.example/3", "")
	if e3.Seq != 3 {
		t.Fatalf("seq %d after the store came back, want 3", e3.Seq)
	}
	if got := f.pg.SQL(t, f.db, "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM evidence_records WHERE session = 's1'"); got != "1,2,3" {
		t.Fatalf("central records of s1 after the store came back: %s, want 1,2,3 (the one not acknowledged shipped too)", got)
	}
}

func TestBatchesInProgressLeaveAVerifiableLog(t *testing.T) {
	f := newFleet(t)
	for i := range 7 {
		f.call(t, "s1", fmt.Sprintf("https://a.example/%d", i), "")
	}
	s := f.shipper(t)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		f.call(t, "s1", fmt.Sprintf("https://a.example/more/%d", i), "")
	}
	// Ship only the first of the batches the new records need.
	b, err := f.local.NextBatch(central.ShippedOf(s), 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.Complete || len(b.Records) != 3 {
		t.Fatalf("batch of at most 3 records: %d records, complete %v", len(b.Records), b.Complete)
	}
	if err := f.central.Ship(context.Background(), "r1", b); err != nil {
		t.Fatal(err)
	}
	rep, got := f.verifyCentral(t)
	if !rep.OK() || got.Ahead != 3 {
		t.Fatalf("a log with a batch in progress: problems %v, ahead %d (want none and 3)", rep.Problems, got.Ahead)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, got = f.verifyCentral(t)
	if !rep.OK() || got.Ahead != 0 || rep.LogHead.Records != 12 {
		t.Fatalf("after the batches: problems %v, ahead %d, log-wide head %+v", rep.Problems, got.Ahead, rep.LogHead)
	}
}

func TestPruneIsShippedAsTheFileHasIt(t *testing.T) {
	f := newFleet(t)
	f.call(t, "old", "https://a.example/", "png-old")
	time.Sleep(10 * time.Millisecond)
	cut := time.Now()
	f.call(t, "new", "https://b.example/", "")
	s := f.shipper(t)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := f.local.Prune(cut)
	if err != nil || len(rep.Sessions) != 1 {
		t.Fatalf("prune: %v, %d sessions removed", err, len(rep.Sessions))
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.pg.SQL(t, f.db, "SELECT count(*) FROM evidence_records WHERE session = 'old'"); got != "0" {
		t.Fatalf("%s records of the pruned session are left in the central store", got)
	}
	vr, _ := f.verifyCentral(t)
	if !vr.OK() || vr.LogHead.Pruned != 1 {
		t.Fatalf("after a prune: problems %v, log-wide head %+v", vr.Problems, vr.LogHead)
	}
}

package central_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/mod/sumdb/note"

	"github.com/browsergate/browsergate/evidence/anchor"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/internal/testkit/s3lab"
)

// bucketFleet is a fleet whose anchorers, each with a log directory of
// its own, copy the log to one bucket with Object Lock.
type bucketFleet struct {
	*fleet
	lab      *s3lab.Lab
	client   *s3.Client
	bucket   string
	signer   note.Signer
	verifier *anchor.Verifier
}

func newBucketFleet(t *testing.T) *bucketFleet {
	t.Helper()
	lab := s3lab.Start(t)
	client := anchor.NewS3Client(anchor.S3Config{Endpoint: lab.Endpoint, Region: lab.Region, AccessKey: lab.AccessKey, SecretKey: lab.SecretKey})
	const bucket = "fleet-log"
	if err := anchor.EnsureBucket(context.Background(), client, bucket); err != nil {
		t.Fatal(err)
	}
	signer, v := fleetKey(t)
	return &bucketFleet{fleet: newFleet(t), lab: lab, client: client, bucket: bucket, signer: signer, verifier: v}
}

// anchorer is a replica's anchorer with a new, empty log directory of
// its own, copying to the fleet's bucket.
func (f *bucketFleet) anchorer(t *testing.T) *central.Anchorer {
	t.Helper()
	return f.anchorerVia(t, f.client)
}

// anchorerVia is anchorer reaching the bucket through client.
func (f *bucketFleet) anchorerVia(t *testing.T, client *s3.Client) *central.Anchorer {
	t.Helper()
	l, err := anchor.Open(context.Background(), anchor.Config{Dir: filepath.Join(t.TempDir(), "log"), Signer: f.signer, CheckpointInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	m, err := anchor.NewMirror(anchor.MirrorConfig{Client: client, Bucket: f.bucket, Retention: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &central.Anchorer{Store: f.central, Log: l, Mirror: m, Verifier: f.verifier, Every: 50 * time.Millisecond,
		// A replica taking over waits out the killed one's round: short here.
		RoundWait: 2 * time.Second}
}

// calls appends n calls to the evidence file and ships them.
func (f *bucketFleet) calls(t *testing.T, session string, n int) {
	t.Helper()
	for i := range n {
		f.call(t, session, fmt.Sprintf("https://%s.example/%d", session, i), "")
	}
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// run runs a until stop is called, as serve does.
func run(a *central.Anchorer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.Run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// anchoredBy ships n calls, runs an anchorer until it anchored and
// copied them, stops it and returns it.
func (f *bucketFleet) anchoredBy(t *testing.T, n int) *central.Anchorer {
	t.Helper()
	a := f.anchorer(t)
	f.calls(t, "s1", n)
	stop := run(a)
	f.waitAnchored(t, n)
	stop()
	return a
}

// waitAnchored waits until every record of the store has a leaf and the
// store has published a checkpoint of size at least n.
func (f *bucketFleet) waitAnchored(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := f.pg.SQL(t, f.db, "SELECT count(*) FROM evidence_records WHERE leaf IS NULL")
		published := f.pg.SQL(t, f.db, "SELECT coalesce(max(size), 0) FROM evidence_checkpoints")
		var size int
		fmt.Sscan(published, &size)
		if left == "0" && size >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not anchored after 60 s: %s record(s) without a leaf, the store published size %d, want %d", left, size, n)
		}
	}
}

// verifyBucket audits the store against the bucket's copy and every
// checkpoint version the bucket keeps.
func (f *bucketFleet) verifyBucket(t *testing.T) *central.AnchorReport {
	t.Helper()
	ctx := context.Background()
	src := anchor.BucketSource{Client: f.client, Bucket: f.bucket}
	kept, err := src.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := f.central.VerifyAnchors(ctx, f.verifier, src, kept, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestANewAnchorerRestoresTheLogFromTheBucket: anchorer A anchors and
// copies 300 records, then appends 5 more whose copy fails (their leaf
// indexes kept in the store), and its machine is lost. Anchorer B, with
// an empty directory of its own, the same key and bucket, takes the lock,
// restores the log from the bucket, anchors the 5 again and 200 more:
// the store verifies against the bucket, every record anchored, and every
// checkpoint version of the bucket is consistent with the current one.
func TestANewAnchorerRestoresTheLogFromTheBucket(t *testing.T) {
	f := newBucketFleet(t)
	a := f.anchoredBy(t, 300)

	f.calls(t, "s2", 5)
	// A's copy fails (a bucket that is not there stands for the crash
	// between appending and copying): the leaves are in A's directory,
	// their indexes in the store, the bucket still at 300.
	crashing := *a
	var err error
	if crashing.Mirror, err = anchor.NewMirror(anchor.MirrorConfig{Client: f.client, Bucket: "missing", Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := crashing.AnchorOnce(context.Background(), nil); err == nil {
		t.Fatal("AnchorOnce copied to a bucket that is not there")
	}
	if got := f.pg.SQL(t, f.db, "SELECT count(*) FROM evidence_records WHERE leaf >= 300"); got != "5" {
		t.Fatalf("%s records kept a leaf index past the bucket's copy, want 5", got)
	}
	if err := a.Log.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(a.Log.Dir()); err != nil { // A's machine is lost
		t.Fatal(err)
	}

	b := f.anchorer(t)
	stopB := run(b)
	defer stopB()
	f.calls(t, "s3", 200)
	f.waitAnchored(t, 505)
	stopB()

	rep := f.verifyBucket(t)
	if !rep.OK() || rep.Records != 505 || rep.Anchored != 505 || rep.Checkpoint.Size < 505 {
		t.Fatalf("after B took over: %+v", rep)
	}
	kept, err := anchor.BucketSource{Client: f.client, Bucket: f.bucket}.Checkpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[uint64]bool{}
	for _, raw := range kept {
		cp, err := f.verifier.Checkpoint(raw)
		if err != nil {
			t.Fatal(err)
		}
		sizes[cp.Size] = true
	}
	if !sizes[300] || len(kept) < 2 {
		t.Fatalf("the bucket keeps %d checkpoint versions (sizes %v), want A's of size 300 and B's after it", len(kept), sizes)
	}
}

// corrupted is the bucket's copy with one leaf of its first entry bundle
// changed on its way to the anchorer (a bucket without Object Lock, or a
// gateway rewriting what it serves).
type corrupted struct{ anchor.Source }

func (c corrupted) ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error) {
	raw, err := c.Source.ReadEntryBundle(ctx, index, p)
	if err == nil && index == 0 {
		raw = bytes.Clone(raw)
		raw[10] ^= 0x01
	}
	return raw, err
}

// TestAnAnchorerRefusesABucketThatDoesNotVerify: an anchorer taking over
// with an empty directory from a copy whose entry bundle was changed
// restores nothing and anchors nothing: the records shipped since stay
// without a leaf, the directory empty.
func TestAnAnchorerRefusesABucketThatDoesNotVerify(t *testing.T) {
	f := newBucketFleet(t)
	a := f.anchoredBy(t, 300)
	a.Log.Close(context.Background())
	f.calls(t, "s2", 3)

	b := f.anchorer(t)
	b.Restore = corrupted{b.Mirror.Source()}
	err := central.TakeOverForTest(context.Background(), b)
	if !errors.Is(err, anchor.ErrBundleMismatch) {
		t.Fatalf("taking over from a corrupted copy: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(b.Log.Dir(), "tile", "entries")); !os.IsNotExist(err) {
		t.Fatalf("the refused restore wrote entry bundles into the directory (%v)", err)
	}
	if size, err := b.Log.Size(context.Background()); err != nil || size != 0 {
		t.Fatalf("after the refused restore the log holds %d leaves (%v), want 0", size, err)
	}
	if got := f.pg.SQL(t, f.db, "SELECT count(*) FROM evidence_records WHERE leaf IS NULL"); got != "3" {
		t.Fatalf("%s records without a leaf, want the 3 shipped after A stopped", got)
	}
}

// TestADirectoryThatDivergesFromTheBucketIsNotCopiedOver: anchorer A's
// directory gets 400 leaves of another history (no record's) after its
// last copy; B restores the log from the bucket and anchors 400 records,
// as large a log with another root. When A takes the lock back, its
// directory (not behind the bucket: no restore) does not extend the
// bucket's copy: it is refused, nothing is copied over B's checkpoint and
// the store still verifies against the bucket.
func TestADirectoryThatDivergesFromTheBucketIsNotCopiedOver(t *testing.T) {
	f := newBucketFleet(t)
	a := f.anchoredBy(t, 300)
	other := make([][]byte, 400)
	for i := range other {
		other[i] = fmt.Appendf(nil, "not a record %d", i)
	}
	if _, err := a.Log.Append(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	f.calls(t, "s2", 400)

	b := f.anchorer(t)
	stopB := run(b)
	f.waitAnchored(t, 700)
	stopB()

	err := central.TakeOverForTest(context.Background(), a)
	if !errors.Is(err, anchor.ErrMirrorAhead) {
		t.Fatalf("A taking the lock back with a diverging directory: %v, want ErrMirrorAhead", err)
	}
	cp, err := f.verifier.Current(context.Background(), b.Mirror.Source())
	if err != nil {
		t.Fatal(err)
	}
	mine, err := b.Log.Signed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != mine.Size || !bytes.Equal(cp.Root, mine.Root) {
		t.Fatalf("the bucket's %s (root %x) is not B's %s (root %x)", cp, cp.Root, mine, mine.Root)
	}
	if rep := f.verifyBucket(t); !rep.OK() || rep.Anchored != 700 {
		t.Fatalf("after A's refused takeover: %+v", rep)
	}
}

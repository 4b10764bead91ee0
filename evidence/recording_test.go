package evidence_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// Three JPEG-looking frames (the report sniffs the JPEG signature) and a
// trace, for record 2 of session r1.
var (
	frame1 = []byte("\xff\xd8\xff\xe0 frame one")
	frame2 = []byte("\xff\xd8\xff\xe0 frame two")
	frame3 = []byte("\xff\xd8\xff\xe0 frame three")
	trace  = []byte(`{"traceEvents":[]}`)
)

func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// recordingFixture writes session r1: record 1 without a recording,
// record 2 with frames 1, 2, 3 and a trace; and session r2 (one record,
// frame 3 again). It returns the closed file's path.
func recordingFixture(t *testing.T) string {
	t.Helper()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	if err := s.Append(envelope("r1", "https://a.example.com/1"), nil); err != nil {
		t.Fatal(err)
	}
	e := envelope("r1", "https://a.example.com/2")
	e.Recording = []evidence.RecordingRef{
		{Kind: evidence.RecordingFrame, Data: frame1},
		{Kind: evidence.RecordingFrame, Data: frame2},
		{Kind: evidence.RecordingFrame, Data: frame3},
		{Kind: evidence.RecordingTrace, Data: trace},
	}
	if err := s.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.Recording[1]; got.SHA256 != hexSum(frame2) || got.Size != len(frame2) {
		t.Errorf("Append filled recording[1] = %s %d, want %s %d", got.SHA256, got.Size, hexSum(frame2), len(frame2))
	}
	e = envelope("r2", "https://b.example.com/")
	e.Recording = []evidence.RecordingRef{{Kind: evidence.RecordingFrame, Data: frame3}}
	if err := s.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// openRecorded opens the recording fixture read-only.
func openRecorded(t *testing.T) *evidence.Store {
	t.Helper()
	s, err := evidence.Open(recordingFixture(t), &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestRecordingIsReferencedByHashAndVerifies(t *testing.T) {
	t.Parallel()
	s := openRecorded(t)
	rep, err := s.Verify()
	if err != nil || !rep.OK() {
		t.Fatalf("Verify = %v, %v; want intact", rep.Problems, err)
	}
	recs, err := s.Records("r1")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range recs[1].Recording {
		kinds = append(kinds, r.Kind+" "+r.SHA256)
		if r.Data != nil {
			t.Error("a record read back carries blob bytes; it should name them only")
		}
	}
	want := []string{"frame " + hexSum(frame1), "frame " + hexSum(frame2), "frame " + hexSum(frame3), "trace " + hexSum(trace)}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("recording = %q, want %q (in order)", kinds, want)
	}
	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var timeline bytes.Buffer
	if err := evidence.WriteTimeline(&timeline, sums, map[string][]*evidence.Envelope{"r1": recs}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(timeline.String(), "[recording: 3 frame(s), 1 trace(s)]") {
		t.Errorf("the timeline does not count record 2's recording:\n%s", timeline.String())
	}
	got, err := s.Recording(hexSum(frame2))
	if err != nil || !bytes.Equal(got, frame2) {
		t.Errorf("Recording(frame 2) = %q, %v", got, err)
	}
	if _, err := s.Recording(hexSum([]byte("nothing"))); !errors.Is(err, evidence.ErrNoRecording) {
		t.Errorf("Recording(unknown) = %v, want ErrNoRecording", err)
	}
}

func TestVerifyDetectsRecordingTampering(t *testing.T) {
	t.Parallel()
	recordings := func(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("recordings")) }
	tests := []struct {
		name string
		edit func(tx *bolt.Tx) error
		want wantProblem
	}{
		{"frame altered", func(tx *bolt.Tx) error {
			return recordings(tx).Put([]byte(hexSum(frame2)), []byte("\xff\xd8\xff\xe0 another frame"))
		}, wantProblem{"r1", 2, "recording " + hexSum(frame2) + " bytes do not match their hash"}},
		{"frame deleted", func(tx *bolt.Tx) error {
			return recordings(tx).Delete([]byte(hexSum(frame1)))
		}, wantProblem{"r1", 2, "recording " + hexSum(frame1) + " missing"}},
		{"trace deleted", func(tx *bolt.Tx) error {
			return recordings(tx).Delete([]byte(hexSum(trace)))
		}, wantProblem{"r1", 2, "recording " + hexSum(trace) + " missing"}},
		{"frame shared by two sessions deleted", func(tx *bolt.Tx) error {
			return recordings(tx).Delete([]byte(hexSum(frame3)))
		}, wantProblem{"r2", 1, "missing"}},
		{"recording taken out of the record", func(tx *bolt.Tx) error {
			v := chain(tx, "r1").Get(key(2))
			i := bytes.Index(v, []byte(`"recording":`))
			j := bytes.Index(v[i:], []byte("],")) + i + 2
			return chain(tx, "r1").Put(key(2), append(bytes.Clone(v[:i]), v[j:]...))
		}, wantProblem{"r1", 2, "hash mismatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := recordingFixture(t)
			tamper(t, path, func(tx *bolt.Tx) error {
				if err := tt.edit(tx); err != nil {
					return err
				}
				relog(t, tx)
				return nil
			})
			rep := verifyFile(t, path, nil)
			if !hasProblem(rep, tt.want) {
				t.Errorf("no problem session %s record %d: …%s…; got %q", tt.want.session, tt.want.seq, tt.want.reason, rep.Problems)
			}
		})
	}
	t.Run("orphan frame", func(t *testing.T) {
		t.Parallel()
		path := recordingFixture(t)
		orphan := []byte("\xff\xd8\xff\xe0 a frame of a removed record")
		tamper(t, path, func(tx *bolt.Tx) error { return recordings(tx).Put([]byte(hexSum(orphan)), orphan) })
		rep := verifyFile(t, path, nil)
		var found bool
		for _, p := range rep.Problems {
			found = found || (p.Blob == evidence.BlobRecording && p.Key == hexSum(orphan) && strings.Contains(p.String(), "recording "+hexSum(orphan)+": not referenced"))
		}
		if !found {
			t.Errorf("no orphan recording problem; got %q", rep.Problems)
		}
	})
}

func TestPruneRemovesTheRecordingOnlyItsSessionsUsed(t *testing.T) {
	t.Parallel()
	path := recordingFixture(t)
	s, err := evidence.Open(path, &evidence.Options{Now: fixedClock(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// r1 ends at t0+1s, r2 at t0+2s: prune r1 only.
	rep, err := s.Prune(t0.Add(1500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{hexSum(frame1), hexSum(frame2), hexSum(trace)}
	got := strings.Join(rep.Recordings, ",")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("Prune removed recordings %q, want it to include %s", rep.Recordings, w)
		}
	}
	if strings.Contains(got, hexSum(frame3)) {
		t.Error("Prune removed frame 3, which session r2 still uses")
	}
	if _, err := s.Recording(hexSum(frame3)); err != nil {
		t.Errorf("frame 3 after prune: %v", err)
	}
	if v, err := s.Verify(); err != nil || !v.OK() {
		t.Errorf("Verify after prune = %v, %v", v.Problems, err)
	}
}

func TestExportHTMLShowsACallsFramesInOrder(t *testing.T) {
	t.Parallel()
	s := openRecorded(t)
	var buf bytes.Buffer
	if _, err := s.ExportHTML(&buf, evidence.HTMLOptions{Session: "r1"}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	var at []int
	for _, f := range [][]byte{frame1, frame2, frame3} {
		i := strings.Index(html, `title="`+hexSum(f)+`"`)
		if i < 0 {
			t.Fatalf("frame %s not in the report", hexSum(f))
		}
		at = append(at, i)
	}
	if at[0] > at[1] || at[1] > at[2] {
		t.Errorf("frames at %v in the report, want them in order", at)
	}
	if !strings.Contains(html, "screencast: 3 frame(s)") || !strings.Contains(html, "trace <span class=\"mono muted\">"+hexSum(trace)) {
		t.Error("the report does not say how many frames the call has, or does not name its trace")
	}
}

func TestBlobsOfNamesEveryBlobOfARecordOnce(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"config_sha256":"` + hexSum([]byte("c")) + `","recording":[{"kind":"frame","sha256":"` + hexSum(frame1) +
		`","size":1},{"kind":"frame","sha256":"` + hexSum(frame1) + `","size":1},{"kind":"trace","sha256":"` + hexSum(trace) + `","size":1}]}`)
	var got []string
	for _, b := range evidence.BlobsOf(raw) {
		got = append(got, b.Kind+"/"+b.SHA256)
	}
	want := []string{"config/" + hexSum([]byte("c")), "recording/" + hexSum(frame1), "recording/" + hexSum(trace)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("BlobsOf = %q, want %q", got, want)
	}
}

func TestAppendRefusesARecordingWithoutBytes(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	e := envelope("r", "https://a.example.com/")
	e.Recording = []evidence.RecordingRef{{Kind: evidence.RecordingFrame, SHA256: hexSum(frame1)}}
	if err := s.Append(e, nil); !errors.Is(err, evidence.ErrInvalidEnvelope) {
		t.Errorf("Append(recording without bytes) = %v, want ErrInvalidEnvelope", err)
	}
}

// TestShippingCarriesTheRecording: a batch for a central store carries
// each recording blob its records name once, WholeOf names them (what a
// prune of a shipped file checks the store holds), and a file assembled
// from the batch, as a central store gives a log back, verifies.
func TestShippingCarriesTheRecording(t *testing.T) {
	t.Parallel()
	path := recordingFixture(t)
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := s.NextBatch(evidence.NewShipped(), 0)
	if err != nil || !b.Complete {
		t.Fatalf("NextBatch: %v, %+v", err, b)
	}
	var shipped []string
	for _, blob := range b.Blobs {
		if blob.Kind == evidence.BlobRecording {
			shipped = append(shipped, blob.SHA256)
		}
	}
	if len(shipped) != 4 {
		t.Errorf("the batch carries recording blobs %q, want the 4 of the log, each once", shipped)
	}
	whole, err := s.WholeOf("r2")
	if err != nil || strings.Join(whole.Blobs, ",") != "recording/"+hexSum(frame3) {
		t.Errorf("WholeOf(r2).Blobs = %q, %v; want its frame", whole.Blobs, err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	err = evidence.Assemble(copyPath, b.LogID, func(a *evidence.Assembler) error {
		for _, r := range b.Records {
			if err := a.Record(r.Session, r.Seq, r.Raw); err != nil {
				return err
			}
		}
		for id, h := range b.Heads {
			if err := a.Head(id, h); err != nil {
				return err
			}
		}
		for _, blob := range b.Blobs {
			if err := a.Blob(blob.Kind, blob.SHA256, blob.Data); err != nil {
				return err
			}
		}
		return a.LogHead(b.LogHead, b.LogSet)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep := verifyFile(t, copyPath, nil); !rep.OK() {
		t.Errorf("the assembled copy does not verify: %q", rep.Problems)
	}
}

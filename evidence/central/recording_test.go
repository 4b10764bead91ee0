package central_test

import (
	"context"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// TestAShippedRecordingVerifiesAsTheFile: the recording blobs a record
// names (frames, a trace) ship with it, once each, and the central copy
// verifies; a frame removed from the store shows in the copy it gives
// back, as a screenshot would.
func TestAShippedRecordingVerifiesAsTheFile(t *testing.T) {
	f := newFleet(t)
	e := &evidence.Envelope{Session: "s1", Principal: "alice", Tool: "web", Command: "click",
		Decision: evidence.Decision{Allowed: true, Stage: "gate"}, Output: "clicked",
		Recording: []evidence.RecordingRef{
			{Kind: evidence.RecordingFrame, Data: []byte("\xff\xd8\xff frame 1")},
			{Kind: evidence.RecordingFrame, Data: []byte("\xff\xd8\xff frame 2")},
			{Kind: evidence.RecordingFrame, Data: []byte("\xff\xd8\xff frame 1")},
			{Kind: evidence.RecordingTrace, Data: []byte(`{"traceEvents":[]}`)},
		}}
	if err := f.local.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep, got := f.verifyCentral(t); !rep.OK() || got.Ahead != 0 {
		t.Fatalf("the central copy does not verify: %v (ahead %d)", rep.Problems, got.Ahead)
	}
	if n := f.count(t, "evidence_blobs WHERE kind = 'recording'"); n != 3 {
		t.Fatalf("%d recording blobs in the central store, want the 3 distinct ones the record names", n)
	}
	frame := e.Recording[1].SHA256
	f.pg.SQL(t, f.db, "DELETE FROM evidence_blobs WHERE kind = 'recording' AND sha256 = '"+frame+"'")
	rep, _ := f.verifyCentral(t)
	if rep.OK() || !strings.Contains(rep.Problems[0].String(), "recording "+frame+" missing") {
		t.Errorf("the central copy without a frame: %v, want the frame named missing", rep.Problems)
	}
}

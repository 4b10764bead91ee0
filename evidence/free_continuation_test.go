package evidence_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/evidence"
)

// A free continuation's mark (revision 13) chains, verifies and reads
// back as written, is covered by the hash like any member, is absent from
// a call that counted, and the HTML report says the call did not count.
func TestFreeContinuationRecorded(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	first := envelope("s-1", "https://www.example.com/")
	first.Command, first.Args = "snapshot", map[string]any{"max_chars": 1000}
	next := envelope("s-1", "https://www.example.com/")
	next.Command, next.Args = "snapshot", map[string]any{"page": 2}
	next.FreeContinuation = &evidence.Continuation{Page: 2, Of: 5}
	for _, e := range []*evidence.Envelope{first, next} {
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := s.Verify(); err != nil || !rep.OK() || rep.Records != 2 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	recs, err := s.Records("s-1")
	if err != nil || len(recs) != 2 {
		t.Fatalf("records: %v %d", err, len(recs))
	}
	if recs[0].FreeContinuation != nil {
		t.Errorf("the counted call reads back marked free: %+v", recs[0].FreeContinuation)
	}
	if got := recs[1].FreeContinuation; got == nil || *got != (evidence.Continuation{Page: 2, Of: 5}) {
		t.Errorf("the free continuation reads back as %+v", got)
	}
	counted, err := evidence.CanonicalJSON(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(counted, []byte("free_continuation")) {
		t.Errorf("the counted call's canonical record has free_continuation:\n%s", counted)
	}
	stored, err := evidence.CanonicalJSON(recs[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := `"free_continuation":{"of":5,"page":2}`; !bytes.Contains(stored, []byte(want)) {
		t.Errorf("the canonical record lacks %s:\n%s", want, stored)
	}
	// The hash covers it: the record without it hashes differently.
	h, err := evidence.Hash(recs[1])
	if err != nil {
		t.Fatal(err)
	}
	bare := *recs[1]
	bare.FreeContinuation = nil
	if hb, err := evidence.Hash(&bare); err != nil || hb == h {
		t.Errorf("the hash does not cover free_continuation (%v)", err)
	}
	s.Close()

	doc, _, _ := exportHTML(t, path, evidence.HTMLOptions{})
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "interaction") })
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	if got := text(rows[0]); !strings.Contains(got, "interaction 1") || strings.Contains(got, "continuation") {
		t.Errorf("the counted call's row: %q", got)
	}
	if got := text(rows[1]); !strings.Contains(got, "interaction 1 (continuation, not counted)") {
		t.Errorf("the free continuation's row does not say it did not count: %q", got)
	}
}

package executor

import (
	"fmt"
	"strings"
	"testing"
)

func refused(url string) Blocked {
	return Blocked{URL: url, Rule: "allowed_domains", Layer: "interception"}
}

func urls(bs []Blocked) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.URL)
	}
	return out
}

// A page that makes one telling refused request between calls and then
// floods the log: the first is kept, and the rest are counted.
func TestBlockLogKeepsTheFirstBetweenCalls(t *testing.T) {
	t.Parallel()
	var l blockLog
	l.add(refused("http://canary/first-marker"))
	for i := range maxBlockLog + 100 {
		l.add(refused(fmt.Sprintf("http://canary/flood%d", i)))
	}
	mark := l.mark()
	l.add(refused("http://canary/during"))
	got, dropped := l.take(mark)
	if len(got) != maxBlockLog+1 {
		t.Fatalf("took %d refusals, want the first %d between calls and the one during the call", len(got), maxBlockLog)
	}
	if got[0].URL != "http://canary/first-marker" || !got[0].Between {
		t.Errorf("first refusal = %+v, want the marker, between calls", got[0])
	}
	if last := got[maxBlockLog-1]; last.URL != fmt.Sprintf("http://canary/flood%d", maxBlockLog-2) || !last.Between {
		t.Errorf("last refusal kept between calls = %+v", last)
	}
	if d := got[maxBlockLog]; d.URL != "http://canary/during" || d.Between {
		t.Errorf("the call's own refusal = %+v: the flood before the call must not crowd it out", d)
	}
	if dropped != (blockDrops{Between: 101}) {
		t.Errorf("dropped = %+v, want 101 between calls", dropped)
	}
	// Everything was handed over: the next call starts afresh.
	if got, dropped := l.take(l.mark()); len(got) != 0 || dropped.total() != 0 {
		t.Errorf("second take = %v, %+v; want nothing", urls(got), dropped)
	}
}

// During a call the first refusals are kept too, and the acting guard's
// first refusal after a mark is kept however many came before it, so that
// a flood cannot hide an unjudged submission.
func TestBlockLogDuringACall(t *testing.T) {
	t.Parallel()
	var l blockLog
	start := l.mark()
	for i := range maxBlockLog + 5 {
		l.add(refused(fmt.Sprintf("http://x/%d", i)))
	}
	act := l.mark()
	if l.unjudgedSubmission(act) != nil {
		t.Fatal("unjudged submission before any")
	}
	l.add(Blocked{URL: "http://x/submit", Rule: ruleUnjudgedSubmission, Layer: "interception"})
	l.add(Blocked{URL: "http://x/submit2", Rule: rulePostedElsewhere, Layer: "interception"})
	u := l.unjudgedSubmission(act)
	if u == nil || u.URL != "http://x/submit" {
		t.Fatalf("unjudgedSubmission = %+v, want the first acting-guard refusal", u)
	}
	if u := l.unjudgedSubmission(l.mark()); u != nil {
		t.Errorf("unjudgedSubmission after a later mark = %+v, want nil", u)
	}
	got, dropped := l.take(start)
	if len(got) != maxBlockLog+1 || got[maxBlockLog].URL != "http://x/submit" {
		t.Errorf("took %d, last %q; want the first %d and the submission", len(got), got[len(got)-1].URL, maxBlockLog)
	}
	for _, b := range got {
		if b.Between {
			t.Fatalf("%s marked between calls, but it was refused during the call", b.URL)
		}
	}
	if dropped != (blockDrops{During: 6}) {
		t.Errorf("dropped = %+v, want 6 during the call", dropped)
	}
}

// A page chooses the length of its URLs: what a stretch keeps is bounded
// in bytes as well, and its first refusal is always kept.
func TestBlockLogBoundsBytes(t *testing.T) {
	t.Parallel()
	var l blockLog
	long := "http://x/" + strings.Repeat("a", maxBlockLogBytes)
	l.add(refused(long))
	l.add(refused("http://x/short"))
	got, dropped := l.takeAll()
	if len(got) != 1 || got[0].URL != long || dropped != (blockDrops{Between: 1}) {
		t.Errorf("took %d (dropped %+v), want the long first one kept and the second counted", len(got), dropped)
	}
}

// takeAll hands over what the pages did since the last call (the session
// ends), all of it between calls.
func TestBlockLogTakeAll(t *testing.T) {
	t.Parallel()
	var l blockLog
	l.add(refused("http://x/1"))
	mark := l.mark()
	l.take(mark)
	if got, d := l.takeAll(); len(got) != 0 || d.total() != 0 {
		t.Fatalf("takeAll after take = %v, %+v", urls(got), d)
	}
	l.add(refused("http://x/after-last-call"))
	got, d := l.takeAll()
	if len(got) != 1 || got[0].URL != "http://x/after-last-call" || !got[0].Between || d.total() != 0 {
		t.Errorf("takeAll = %+v, %+v", got, d)
	}
}

// The reply says how many were refused in all, and how many the record
// does not list.
func TestBlockedNoteCountsDropped(t *testing.T) {
	t.Parallel()
	var bs []Blocked
	for i := range 7 {
		b := refused(fmt.Sprintf("http://x/%d", i))
		b.Between = i < 4
		bs = append(bs, b)
	}
	note := blockedNote(bs, blockDrops{Between: 10, During: 3})
	for _, want := range []string{
		"blocked 20 request(s)",
		"(14 made by the pages themselves since the previous call)",
		"http://x/0 (allowed_domains, interception)",
		"; and 15 more",
		"the evidence record lists the first 7 and counts the other 13 (blocked_dropped)",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	if note := blockedNote(bs[:2], blockDrops{}); strings.Contains(note, "more") || strings.Contains(note, "blocked_dropped") {
		t.Errorf("note without drops: %s", note)
	}
}

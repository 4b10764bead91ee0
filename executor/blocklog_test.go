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
	got, dropped, _ := l.take(mark)
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
	if got, dropped, _ := l.take(l.mark()); len(got) != 0 || dropped.total() != 0 {
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
	got, dropped, _ := l.take(start)
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
	got, dropped, _ := l.takeAll()
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
	if got, d, _ := l.takeAll(); len(got) != 0 || d.total() != 0 {
		t.Fatalf("takeAll after take = %v, %+v", urls(got), d)
	}
	l.add(refused("http://x/after-last-call"))
	got, d, _ := l.takeAll()
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

func grant(url string) permissionGrant {
	return permissionGrant{URL: url, Permission: "geolocation", Origin: "https://maps.example.test"}
}

// A granted permission request is kept apart from the refusals: take
// hands it back on its own, marked between calls when no call ran, and
// no reader of the refusals sees it (the decision log line and event,
// network_log's rules, the acting guard's refusal).
func TestBlockLogKeepsGrantsApartFromRefusals(t *testing.T) {
	t.Parallel()
	var told []string
	l := blockLog{onAdd: func(b Blocked) { told = append(told, b.URL) }}
	l.granted(grant("https://maps.example.test/before"))
	mark := l.mark()
	l.add(refused("http://x/refused"))
	l.granted(grant("https://maps.example.test/during"))
	if u := l.unjudgedSubmission(mark); u != nil {
		t.Errorf("unjudgedSubmission = %+v, want none: a grant is no refusal", u)
	}
	if rules := l.refusals(); len(rules) != 1 || rules["http://x/refused"].Rule == "" {
		t.Errorf("refusals = %v, want only the refusal", rules)
	}
	blocked, dropped, granted := l.take(mark)
	if len(blocked) != 1 || blocked[0].URL != "http://x/refused" || dropped.total() != 0 {
		t.Errorf("refusals taken = %v (%+v), want only the refusal", urls(blocked), dropped)
	}
	if len(told) != 1 || told[0] != "http://x/refused" {
		t.Errorf("onAdd was told of %q, want only the refusal", told)
	}
	want := []permissionGrant{grant("https://maps.example.test/before"), grant("https://maps.example.test/during")}
	want[0].Between = true
	if len(granted.list) != 2 || granted.list[0] != want[0] || granted.list[1] != want[1] || granted.dropped != 0 {
		t.Errorf("grants taken = %+v, want %+v", granted, want)
	}
	if _, _, again := l.take(l.mark()); len(again.list) != 0 || again.dropped != 0 {
		t.Errorf("second take = %+v, want no grant", again)
	}
}

// What the session's pages were granted after its last call is handed
// over when it ends, all between calls, even when nothing was refused.
func TestBlockLogTakeAllHandsOverGrants(t *testing.T) {
	t.Parallel()
	var l blockLog
	l.take(l.mark())
	l.granted(grant("https://maps.example.test/after-last-call"))
	blocked, dropped, granted := l.takeAll()
	if len(blocked) != 0 || dropped.total() != 0 {
		t.Errorf("refusals = %v (%+v), want none", urls(blocked), dropped)
	}
	if len(granted.list) != 1 || !granted.list[0].Between || granted.list[0].URL != "https://maps.example.test/after-last-call" {
		t.Errorf("grants = %+v, want the one after the last call, between calls", granted)
	}
}

// A page can be granted in a loop (a new frame each time): each stretch
// keeps its first maxBlockLog grants and counts the rest, on a bound of
// their own, so the grants crowd out no refusal, and the call's own
// grants are kept after a flood between calls.
func TestBlockLogBoundsGrantsPerStretch(t *testing.T) {
	t.Parallel()
	var l blockLog
	for i := range maxBlockLog + 7 {
		l.granted(grant(fmt.Sprintf("https://maps.example.test/%d", i)))
	}
	l.add(refused("http://x/refused-after-the-flood"))
	mark := l.mark()
	l.granted(grant("https://maps.example.test/during"))
	blocked, dropped, granted := l.take(mark)
	if len(blocked) != 1 || dropped.total() != 0 {
		t.Errorf("refusals = %v (%+v), want the one refusal, kept", urls(blocked), dropped)
	}
	if len(granted.list) != maxBlockLog+1 || granted.dropped != 7 {
		t.Fatalf("kept %d grants and counted %d, want %d and 7", len(granted.list), granted.dropped, maxBlockLog+1)
	}
	if first, last := granted.list[0], granted.list[maxBlockLog]; first.URL != "https://maps.example.test/0" || !first.Between ||
		last.URL != "https://maps.example.test/during" || last.Between {
		t.Errorf("first grant %+v, the call's own %+v", first, last)
	}
}

// Permissions refused are listed apart from the requests the egress gate
// blocked, each name once per page.
func TestBlockedNoteListsPermissionsApart(t *testing.T) {
	bs := []Blocked{
		{URL: "http://a.test/perm.html", Rule: `permissions "notifications"`, Layer: permissionLayer},
		{URL: "http://a.test/x.js", Rule: "not in allowed_domains", Layer: "interception"},
		{URL: "http://a.test/perm.html", Rule: `permissions "camera"`, Layer: permissionLayer},
		{URL: "http://a.test/perm.html", Rule: `permissions "notifications"`, Layer: permissionLayer},
	}
	note := blockedNote(bs, blockDrops{})
	if !strings.Contains(note, "\n[egress gate blocked 1 request(s): http://a.test/x.js (not in allowed_domains, interception)]") {
		t.Errorf("the egress line: %q", note)
	}
	if !strings.HasSuffix(note, "\n[permissions refused without a prompt: notifications, camera (page http://a.test/perm.html)]") {
		t.Errorf("the permissions line: %q", note)
	}
	if only := blockedNote(bs[:1], blockDrops{}); strings.Contains(only, "egress") {
		t.Errorf("a permission alone is told as an egress block: %q", only)
	}
}

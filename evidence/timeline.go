package evidence

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// timelineTime is the record time in a timeline: milliseconds are enough
// for a reader, the exact time is in the record.
const timelineTime = "2006-01-02T15:04:05.000Z07:00"

// maxArgLen bounds one argument value in a timeline line, so a long text
// argument cannot push the verdict off screen.
const maxArgLen = 60

// WriteTimeline prints sessions (in the given order) and their records one
// line each, for a person reading the log:
//
//	session s-1  agent alice  3 records  2026-11-22T10:00:00.000Z .. 2026-11-22T10:00:02.000Z  head 1f2e3d4c5b6a
//	  #1 2026-11-22T10:00:00.000Z  navigate  ALLOW cedar: allow [p1]  url=https://a.example.com/  -> https://a.example.com/ "Home"
//	  #2 2026-11-22T10:00:01.123Z  navigate  DENY scope: allowed_domains — host 127.0.0.2 not in allowed_domains  url=http://127.0.0.2/
//
// Text that came from pages or agents (titles, arguments, reasons) is
// quoted when it holds control, bidirectional or zero-width characters,
// which are escaped as the HTML report and the console escape them
// (VisibleLine), so it cannot rewrite the terminal or read as other text. Sessions without an entry in records print their header only.
func WriteTimeline(w io.Writer, sessions []SessionSummary, records map[string][]*Envelope) error {
	return WriteTimelineWith(w, sessions, records, TimelineOptions{})
}

// TimelineOptions choose what a timeline shows besides the records.
type TimelineOptions struct {
	// Summary shows a session as its header and one line counting its
	// calls allowed, refused (by stage) and decided by a human, instead
	// of a line per record (with RefusalsOnly, the refused calls still
	// follow it).
	Summary bool
	// RefusalsOnly shows only the calls refused, without hashes (head,
	// screenshots): the view an auditor reads first.
	RefusalsOnly bool
	// Config describes a configuration blob in one line ("" when
	// unknown); each distinct one a session's records name is listed
	// under its header. Nil lists none.
	Config func(sha256hex string) string
	// Notes are lines about a session from outside its log (the fleet's
	// record that it ended as its lease expired), printed under its
	// header, each made visible on one line. Nil prints none.
	Notes func(s SessionSummary, recs []*Envelope) []string
}

// WriteTimelineWith is WriteTimeline with options.
func WriteTimelineWith(w io.Writer, sessions []SessionSummary, records map[string][]*Envelope, opts TimelineOptions) error {
	bw := bufio.NewWriter(w)
	for _, s := range sessions {
		recs := records[s.ID]
		fmt.Fprintf(bw, "session %s", VisibleLine(s.ID))
		if len(recs) > 0 && recs[0].Principal != "" {
			fmt.Fprintf(bw, "  agent %s", VisibleLine(recs[0].Principal))
		}
		noun := "records"
		if s.Records == 1 {
			noun = "record"
		}
		fmt.Fprintf(bw, "  %d %s  %s .. %s", s.Records, noun,
			s.First.UTC().Format(timelineTime), s.Last.UTC().Format(timelineTime))
		if s.Head != "" && !opts.RefusalsOnly {
			fmt.Fprintf(bw, "  head %s", s.Head[:min(12, len(s.Head))])
		}
		bw.WriteByte('\n')
		if opts.Config != nil {
			var seen []string
			for _, e := range recs {
				if e.ConfigSHA256 != "" && !slices.Contains(seen, e.ConfigSHA256) {
					seen = append(seen, e.ConfigSHA256)
					fmt.Fprintf(bw, "  config %s: %s\n", e.ConfigSHA256[:min(12, len(e.ConfigSHA256))], VisibleLine(opts.Config(e.ConfigSHA256)))
				}
			}
		}
		if opts.Notes != nil {
			for _, n := range opts.Notes(s, recs) {
				fmt.Fprintf(bw, "  %s\n", VisibleLine(n))
			}
		}
		if opts.Summary {
			writeSummary(bw, recs)
		}
		if opts.Summary && !opts.RefusalsOnly {
			continue
		}
		for _, e := range recs {
			if opts.RefusalsOnly {
				if e.Kind == KindSessionEnd || e.Decision.Allowed {
					continue
				}
				c := *e
				c.ScreenshotSHA256 = ""
				e = &c
			}
			writeRecordLine(bw, e)
		}
	}
	return bw.Flush()
}

// writeSummary writes a session's summary line.
func writeSummary(w *bufio.Writer, recs []*Envelope) {
	fmt.Fprintf(w, "  summary: %s\n", summaryOf(recs))
}

// summaryOf counts a session's calls: allowed, refused by stage (in the
// order the stages come), and decided by a human.
func summaryOf(recs []*Envelope) string {
	calls, allowed, approved, denied := 0, 0, 0, 0
	var stages []string
	refused := map[string]int{}
	for _, e := range recs {
		if e.Kind != "" {
			continue
		}
		calls++
		if a := e.Decision.Approval; a != nil && a.Channel != "timeout" && a.Channel != "cancelled" {
			if a.Approved {
				approved++
			} else {
				denied++
			}
		}
		if e.Decision.Allowed {
			allowed++
			continue
		}
		st := string(e.Decision.Stage)
		if refused[st] == 0 {
			stages = append(stages, st)
		}
		refused[st]++
	}
	parts := make([]string, 0, len(stages))
	total := 0
	for _, st := range stages {
		parts = append(parts, fmt.Sprintf("%s %d", VisibleLine(st), refused[st]))
		total += refused[st]
	}
	s := fmt.Sprintf("%d call(s): %d allowed, %d refused", calls, allowed, total)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s + fmt.Sprintf("; a human approved %d and denied %d", approved, denied)
}

func writeRecordLine(w *bufio.Writer, e *Envelope) {
	what := VisibleLine(e.Command)
	if e.Kind != "" { // not a call
		what = "[" + VisibleLine(e.Kind) + "]"
	}
	if e.Kind == KindPageDownload {
		when := "during"
		if e.BetweenCalls {
			when = "after"
		}
		what += fmt.Sprintf(" (%s #%d)", when, e.CallSeq)
	}
	shown := verdict(e.Decision)
	if e.RecordsOnly() {
		shown = recordedVerdict(e.Decision)
	}
	fmt.Fprintf(w, "  #%d %s  %s  %s", e.Seq, e.Time.UTC().Format(timelineTime), what, shown)
	if args := compactArgs(e.Args); args != "" {
		fmt.Fprintf(w, "  %s", args)
	}
	state := e.After
	if len(state) == 0 {
		state = e.Before
	}
	if url, ok := state["url"].(string); ok && url != "" {
		fmt.Fprintf(w, "  -> %s", VisibleLine(url))
		if title, ok := state["title"].(string); ok && title != "" {
			fmt.Fprintf(w, " %s", quote(shorten(title)))
		}
	}
	if e.ScreenshotSHA256 != "" {
		fmt.Fprintf(w, "  [screenshot %s]", e.ScreenshotSHA256[:min(12, len(e.ScreenshotSHA256))])
	}
	if frames, traces := recordingCounts(e.Recording); frames+traces > 0 {
		fmt.Fprintf(w, "  [recording: %d frame(s), %d trace(s)]", frames, traces)
	}
	if e.Error != "" {
		fmt.Fprintf(w, "  error: %s", VisibleLine(e.Error))
	}
	w.WriteByte('\n')
}

// verdict renders a decision as "ALLOW cedar: allow [p1]" or
// "DENY scope: rule — reason; reason".
func verdict(d Decision) string {
	if d.Allowed {
		return labelledVerdict("ALLOW", d)
	}
	return labelledVerdict("DENY", d)
}

// labelledVerdict is d as verdict shows it, after label.
func labelledVerdict(label string, d Decision) string {
	var b strings.Builder
	b.WriteString(label)
	if d.Stage != "" {
		b.WriteString(" " + VisibleLine(string(d.Stage)) + ":")
	}
	switch {
	case d.Rule != "":
		b.WriteString(" " + VisibleLine(d.Rule))
	case d.Cedar != "":
		b.WriteString(" " + VisibleLine(d.Cedar))
	}
	if len(d.PolicyIDs) > 0 {
		b.WriteString(" [" + VisibleLine(strings.Join(d.PolicyIDs, ",")) + "]")
	}
	reasons := d.Reasons
	if len(reasons) == 0 && d.Scope != "" && !d.Allowed {
		reasons = []string{d.Scope}
	}
	if len(reasons) > 0 {
		b.WriteString(" — " + VisibleLine(strings.Join(reasons, "; ")))
	}
	if a := d.Approval; a != nil {
		verdict := "denied"
		if a.Approved {
			verdict = "approved"
		}
		by := ""
		if a.By != "" {
			by = " by " + a.By
		}
		b.WriteString(" (approval " + VisibleLine(a.ID) + ": " + verdict + VisibleLine(by) + " via " + VisibleLine(a.Channel) + ")")
	}
	return b.String()
}

// recordedVerdict is how a record that refused nothing (RecordsOnly)
// shows its decision: RECORDED, not the DENY its stored decision would
// read as.
func recordedVerdict(d Decision) string {
	return labelledVerdict("RECORDED", d)
}

// compactArgs renders args as "k=v k2=v2" in key order; strings bare when
// they are plain, everything else as compact JSON.
func compactArgs(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var val string
		if s, ok := args[k].(string); ok {
			val = shorten(s)
			if val == "" || strings.ContainsAny(val, " \"=") || VisibleLine(val) != val {
				val = quote(val)
			}
		} else {
			raw, err := json.Marshal(args[k])
			if err != nil {
				raw = []byte("?")
			}
			val = VisibleLine(shorten(string(raw)))
		}
		parts = append(parts, VisibleLine(k)+"="+val)
	}
	return strings.Join(parts, " ")
}

// shorten cuts s to maxArgLen runes, marking the cut.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxArgLen {
		return s
	}
	i, n := 0, 0
	for i = range s {
		if n == maxArgLen {
			break
		}
		n++
	}
	return s[:i] + "…"
}

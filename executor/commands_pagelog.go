package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// console_messages and network_log: the tab's console and network logs
// (pagelog.go) as the agent reads them, masked as read and clipped, from
// the entry after since.

func actConsoleMessages(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	since, _ := args["since"].(int64)
	least := levelRank[fmt.Sprint(args["level"])]
	l := s.tab.watch.log
	l.mu.Lock()
	var all []consoleEntry
	for _, e := range l.console {
		if e.Seq > int(since) && levelRank[e.Level] >= least {
			all = append(all, e)
		}
	}
	dropped := l.consoleDropped
	l.mu.Unlock()
	all, more := first(all)
	var b strings.Builder
	items := make([]any, len(all))
	for i, e := range all {
		// Masked for the document that logged it (session.logMask).
		mask, _ := s.logMask(e.logged) // a console message has one document
		e.Text, e.Source = pagetext.Balanced(clip(mask(e.Text), maxLogText)), pagetext.Balanced(clip(mask(e.Source), maxLogText))
		fmt.Fprintf(&b, "#%d %s: %s", e.Seq, e.Level, e.Text)
		if e.Source != "" {
			b.WriteString("  (" + e.Source + ")")
		}
		b.WriteByte('\n')
		items[i] = e
	}
	last := 0
	if len(all) > 0 {
		last = all[len(all)-1].Seq
	}
	return output{Text: logText(&b, "console message", len(all), more, last, dropped),
		Structured: map[string]any{"messages": items}}, nil
}

func actNetworkLog(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	since, _ := args["since"].(int64)
	all, more, dropped := s.loggedRequests(since, "")
	return requestsReply(all, more, dropped, func(b *strings.Builder, r *requestEntry) {
		fmt.Fprintf(b, "#%d %s %s %s", r.Seq, r.Method, r.URL, r.Type)
		writeOutcome(b, r)
		if r.Size > 0 {
			fmt.Fprintf(b, " %d B", r.Size)
		}
		if r.Millis > 0 {
			fmt.Fprintf(b, " %.0f ms", r.Millis)
		}
	}), nil
}

// levelRank orders the levels for console_messages' minimum level.
var levelRank = map[string]int{"debug": 0, "info": 1, "warning": 2, "error": 3}

// first is the first maxLogReply entries, and how many more there are.
func first[E any](all []E) ([]E, int) {
	if len(all) > maxLogReply {
		return all[:maxLogReply], len(all) - maxLogReply
	}
	return all, 0
}

// logText ends a log reply with what it leaves out: the entries after the
// last shown (and the since that gets them) and those the tab's log no
// longer holds.
func logText(b *strings.Builder, what string, n, more, last, dropped int) string {
	if n == 0 {
		b.WriteString("no " + what + "s")
	}
	if more > 0 {
		fmt.Fprintf(b, "\n[%d more %s(s): ask again with since: %d]", more, what, last)
	}
	if dropped > 0 {
		fmt.Fprintf(b, "\n[%d older %s(s) are no longer kept]", dropped, what)
	}
	return strings.TrimRight(b.String(), "\n")
}

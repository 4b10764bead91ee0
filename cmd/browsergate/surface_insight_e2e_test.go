package main

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
)

// The command-surface suite's steps for the commands of insight into a
// page (accessibility_audit, performance_trace), on its page /insight.

// surfaceInsightPage breaks two accessibility rules: an image without a
// text alternative and a field without a label.
func surfaceInsightPage(w http.ResponseWriter, r *http.Request) {
	fmt.Fprint(w, `<!doctype html><html lang=en><title>Insight</title>
<main><h1>Insight page</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" id=logo><input id=unlabelled></main>`)
}

func (s *surface) runInsight(t *testing.T) {
	s.allow(t, "navigate", map[string]any{"url": s.site + "/insight"}, `title="Insight"`)
	// After a snapshot of the page, its elements come with their refs.
	s.allow(t, "snapshot", nil, "Insight page")
	audit := s.allow(t, "accessibility_audit", nil, "image-alt (critical", "#logo", "label (critical", "#unlabelled")
	if !regexp.MustCompile(`\n    e[0-9]+ #unlabelled\n`).MatchString(audit) {
		t.Errorf("accessibility_audit after a snapshot gives the unlabelled field no ref:\n%s", audit)
	}
	s.allow(t, "performance_trace", map[string]any{"reload": true, "duration_ms": 1000}, "across a reload", "slowest requests:", "/insight")
}

package executor

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// find: the lines of a snapshot that hold a ref and the text asked for,
// without the rest of the page. It renders the page as snapshot does, so
// its refs are a snapshot's and replace the latest snapshot's; its match
// is on the masked text, so it tells of a secret no more than a snapshot.

const (
	// maxFindMatches bounds the lines one find returns.
	maxFindMatches = 50
	// maxFindLine bounds one line it returns.
	maxFindLine = 1000
)

// refToken is a ref as a snapshot line writes it.
var refToken = regexp.MustCompile(`\be[0-9]{1,6}\b`)

func actFind(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	want, _ := args["text"].(string)
	if strings.TrimSpace(want) == "" {
		return output{}, fmt.Errorf("argument text: give the text to look for")
	}
	text, err := s.renderPage(ctx, "")
	if err != nil {
		return output{}, err
	}
	s.tab.paged = paged{} // the latest snapshot's further pages hold the refs find replaced
	want = strings.ToLower(want)
	var lines []string
	more := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(strings.ToLower(line), want) || !s.holdsRef(line) {
			continue
		}
		if len(lines) == maxFindMatches {
			more++
			continue
		}
		lines = append(lines, pagetext.Balanced(clip(strings.TrimSpace(line), maxFindLine)))
	}
	// The reply does not repeat the agent's text (see waitFor).
	if len(lines) == 0 {
		return output{Text: "no element with a ref shows that text (refs of the latest snapshot are replaced by this page's)"}, nil
	}
	out := output{Text: strings.Join(lines, "\n"), Structured: map[string]any{"matches": lines, "more": more}}
	if more > 0 {
		out.notes = fmt.Sprintf("[%d more matching lines: narrow the text, or take a snapshot]", more)
	}
	return out, nil
}

// holdsRef reports whether a line of the latest rendering holds one of
// its refs.
func (s *session) holdsRef(line string) bool {
	for _, tok := range refToken.FindAllString(line, -1) {
		if _, ok := s.tab.refs[tok]; ok {
			return true
		}
	}
	return false
}

package executor

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// find: the elements of a snapshot whose text or accessible name holds
// the text asked for, each as the snapshot writes it (with its ref),
// without the rest of the page. It renders the page as snapshot does, so
// its refs are a snapshot's and replace the latest snapshot's; its match
// is on the masked text, so it tells of a secret no more than a snapshot.

const (
	// maxFindMatches bounds the elements one find returns.
	maxFindMatches = 50
	// maxFindElement bounds one element it returns.
	maxFindElement = 1000
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
	if s.tab.paged.command == "snapshot" {
		s.tab.paged = paged{} // the latest snapshot's further pages hold the refs find replaced
	}
	want = strings.ToLower(want)
	var found []string
	more := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(strings.ToLower(line), want) {
			continue
		}
		for _, el := range s.elementsOf(line) {
			if !strings.Contains(strings.ToLower(el), want) {
				continue
			}
			if len(found) == maxFindMatches {
				more++
				continue
			}
			found = append(found, pagetext.Balanced(clip(el, maxFindElement)))
		}
	}
	// The reply does not repeat the agent's text (see waitFor).
	if len(found) == 0 {
		return output{Text: "no element with a ref shows that text"}, nil
	}
	out := output{Text: strings.Join(found, "\n"), Structured: map[string]any{"elements": found, "more": more}}
	if more > 0 {
		out.notes = fmt.Sprintf("[%d more matching elements: narrow the text, or take a snapshot]", more)
	}
	return out, nil
}

// elementsOf are the elements with a ref on a line of the latest
// rendering, each as the line writes it: from the [ before its ref to the
// ] or ) after it — [button "Save" e5], [link text](e4 /target) — the
// [ that the brackets of a name in it ([secret NAME]) leave open.
func (s *session) elementsOf(line string) []string {
	var out []string
	for _, at := range refToken.FindAllStringIndex(line, -1) {
		if _, ok := s.tab.refs[line[at[0]:at[1]]]; !ok {
			continue
		}
		before := line[:at[0]]
		if strings.HasSuffix(before, "](") { // a link: its text is closed before its ref
			before = before[:len(before)-2]
		}
		begin := opening(before)
		end := strings.IndexAny(line[at[1]:], "])")
		if begin < 0 || end < 0 {
			continue
		}
		out = append(out, line[begin:at[1]+end+1])
	}
	return out
}

// opening is the index of the last [ of s that no later ] closes, or -1.
func opening(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ']':
			depth++
		case '[':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

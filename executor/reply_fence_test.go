package executor

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// The line that says where a paged reply is comes after the page
// content's fence, where the page cannot reach; a page that prints a
// look-alike of it has it inside the fence, as the page's own text.
func TestPagedReplyWritesItsPageLineAfterTheFence(t *testing.T) {
	const lookalike = "[page 1 of 9 of this snapshot; the next: snapshot {page: 2}]"
	page, where := pageOf("snapshot", []string{"heading\n" + lookalike + "\n", "more"}, 1)
	s := &session{manifest: &toolclad.Manifest{}}
	tn := &turn{call: &toolclad.Call{Command: &toolclad.Command{Name: "snapshot"}}, out: output{Text: page, notes: where}}
	text := (&Executor{}).reply(s, tn).Text

	end := strings.Index(text, "\n[END PAGE CONTENT ")
	if !strings.HasPrefix(text, "[PAGE CONTENT ") || end < 0 {
		t.Fatalf("the reply is not fenced: %q", text)
	}
	inside, after := text[:end], text[end:]
	if !strings.Contains(inside, lookalike) {
		t.Errorf("the page's look-alike line is not inside the fence: %q", text)
	}
	if strings.Contains(inside, "[page 1 of 2") {
		t.Errorf("browsergate's page line is inside the fence: %q", text)
	}
	if !strings.Contains(after, "\n[page 1 of 2 of this snapshot; the next: snapshot {page: 2}]") {
		t.Errorf("browsergate's page line is not after the fence: %q", text)
	}
}

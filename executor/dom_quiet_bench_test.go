package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDOMQuietWait measures what the quiet-DOM wait costs a navigate
// through the whole loop: on a small page that is still once parsed
// (still-page: the wait is most of what a navigate adds to the load), and
// navigate + snapshot of the IETF draft of go-readability's test pages
// (ietf-draft: a long page of `make bench-peers`). The wait counts its
// 20 ms window from the document's last mutation, so on a document that
// has been still since it was parsed it ends as soon as the load does
// not come within 20 ms of the parsing's end.
func BenchmarkDOMQuietWait(b *testing.B) {
	b.Run("still-page", func(b *testing.B) {
		rig := newBenchRig(b, []byte("<!doctype html><title>Still</title><p>Nothing moves here.</p><a href=/next>Next</a>"))
		e := rig.newExecutor()
		defer e.Close()
		for b.Loop() {
			rig.call(b, e, "bench", "navigate", map[string]any{"url": rig.url})
		}
	})
	b.Run("ietf-draft", func(b *testing.B) {
		dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "codeberg.org/readeck/go-readability/v2").Output()
		if err != nil {
			b.Skip("go-readability's test pages are not at hand:", err)
		}
		draft, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "test-pages", "ietf-1", "source.html"))
		if err != nil {
			b.Skip("no IETF draft in go-readability's test pages:", err)
		}
		rig := newBenchRig(b, draft)
		e := rig.newExecutor()
		defer e.Close()
		for b.Loop() {
			rig.call(b, e, "bench", "navigate", map[string]any{"url": rig.url})
			rig.call(b, e, "bench", "snapshot", map[string]any{"max_chars": int64(1000000)})
		}
	})
}

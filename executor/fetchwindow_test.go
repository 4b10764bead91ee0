package executor

import (
	"strings"
	"testing"
)

// TestWindowOf proves fetch_page's windows: characters, not bytes; every
// start from 0 to the end reads the text in order with nothing lost or
// repeated; a start past the end is refused with the text's length.
func TestWindowOf(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("añb€", 7) // 28 characters, 56 bytes
	var joined strings.Builder
	start := 0
	for {
		w, err := windowOf(text, start, 5)
		if err != nil {
			t.Fatalf("windowOf(%d): %v", start, err)
		}
		if w.start != start || w.total != 28 || w.end-w.start != len([]rune(w.text)) {
			t.Fatalf("window from %d = %+v", start, w)
		}
		joined.WriteString(w.text)
		if w.end == w.total {
			break
		}
		start = w.end
	}
	if joined.String() != text {
		t.Errorf("the windows join to %q, want %q", joined.String(), text)
	}
	if _, err := windowOf(text, 28, 5); err == nil || !strings.Contains(err.Error(), "start_index 28 is past the end of the page's text, which has 28 characters") {
		t.Errorf("start at the end: %v", err)
	}
	if w, err := windowOf("", 0, 5); err != nil || w.text != "" || w.total != 0 {
		t.Errorf("an empty text from 0 = %+v, %v", w, err)
	}
}

// TestWindowWhole proves which items (links, tables) a window shows whole.
func TestWindowWhole(t *testing.T) {
	t.Parallel()
	items := []string{"aaaa", "bbbb", "cccc", "dddd"} // at 0, 4, 8, 12
	for _, tc := range []struct {
		start, end, first, n int
	}{
		{0, 16, 0, 4},
		{0, 10, 0, 2},
		{4, 12, 1, 2},
		{5, 16, 2, 2},
		{5, 7, 0, 0},
	} {
		first, n := window{start: tc.start, end: tc.end}.whole(items)
		if n != tc.n || n > 0 && first != tc.first {
			t.Errorf("window [%d, %d): items from %d, %d of them; want from %d, %d", tc.start, tc.end, first, n, tc.first, tc.n)
		}
	}
}

// TestFetchNext proves the call fetch_page offers for the rest carries
// the arguments the call gave that shape the text, and only those.
func TestFetchNext(t *testing.T) {
	t.Parallel()
	args := map[string]any{"url": "https://example.com/a", "extract": "links", "max_length": int64(20000)}
	if got := fetchNext("https://example.com/a", 20000, args, map[string]any{"url": "https://example.com/a", "max_length": float64(50000), "extract": "links"}); !strings.Contains(got, `extract: "links", max_length: 20000, start_index: 20000}`) {
		t.Errorf("with extract and max_length given: %s", got)
	}
	if got := fetchNext("https://example.com/a", 5000, args, map[string]any{"url": "https://example.com/a"}); strings.Contains(got, "extract") || strings.Contains(got, "max_length") || !strings.HasSuffix(got, ", start_index: 5000}") {
		t.Errorf("with neither given: %s", got)
	}
}

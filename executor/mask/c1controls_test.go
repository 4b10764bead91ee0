package mask_test

import (
	"strings"
	"testing"
)

// TestMaskerC1ControlsThatStandForThemselves: the five bytes windows-1252
// leaves undefined (81, 8D, 8F, 90 and 9D hex) stand for the C1 controls
// of the same number; a text holding one of them, in any spelling, is
// masked as any other (a wikipedia page with a U+0081 in it once held the
// masker in a loop, appending the same character for ever).
func TestMaskerC1ControlsThatStandForThemselves(t *testing.T) {
	t.Parallel()
	m := newMasker(t, "correct horse")
	for _, c := range []string{"\u0081", "\u008d", "\u008f", "\u0090", "\u009d", "\x81", "%81", "%C2%81", "&#129;", "&#x9d;", `\u0081`, `\x8f`} {
		text := "before " + c + " correct horse " + c + " after"
		got := m.Mask(text)
		if strings.Contains(got, "correct horse") || !strings.Contains(got, "[secret PW]") {
			t.Errorf("%q masked to %q", text, got)
		}
		if !strings.HasPrefix(got, "before "+c) || !strings.HasSuffix(got, c+" after") {
			t.Errorf("%q masked to %q: the text around the secret changed", text, got)
		}
	}
}

package executor

import (
	"slices"
	"testing"
)

// TestTypedPieces: what the record masks of text typed into a password
// field is the text without the declared secrets' placeholders, in the
// pieces around them, and only pieces as long as a secret may be.
func TestTypedPieces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text         string
		placeholders []string
		want         []string
	}{
		{"hunter2-xyz", nil, []string{"hunter2-xyz"}},
		{"short", nil, nil},
		{"<PW>", []string{"<PW>"}, nil},
		{"prefix-<PW>-suffix9", []string{"<PW>"}, []string{"prefix-", "-suffix9"}},
		{"ab<PW>long-tail<PIN>x", []string{"<PW>", "<PIN>"}, []string{"long-tail"}},
		{"pässwörd", nil, []string{"pässwörd"}},
	} {
		if got := typedPieces(tc.text, tc.placeholders); !slices.Equal(got, tc.want) {
			t.Errorf("typedPieces(%q, %q) = %q, want %q", tc.text, tc.placeholders, got, tc.want)
		}
	}
}

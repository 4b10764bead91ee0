package snapshot_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/snapshot"
)

// TestRenderPasswordMask: a password field that holds a value shows the
// same fixed mask whatever the value's length (Chromium's accessibility
// tree gives one dot a character: 28 for one, 2 for the other, as the
// capture holds), an empty one shows no value, and a text field beside
// them shows its own.
func TestRenderPasswordMask(t *testing.T) {
	t.Parallel()
	got := render(t, "password", snapshot.Options{}).Text
	for _, want := range []string{
		`Password [textbox e2 value="` + snapshot.PasswordMask + `"]`,
		`PIN [textbox e3 value="` + snapshot.PasswordMask + `"]`,
		`New password [textbox e4]`,
		`User [textbox e1 value="alice"]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the snapshot lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "••") && strings.Count(got, "•") != 2*len([]rune(snapshot.PasswordMask)) {
		t.Errorf("the snapshot shows dots other than the two masks:\n%s", got)
	}
}

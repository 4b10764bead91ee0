package replay_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/replay"
)

func TestParseSecret(t *testing.T) {
	t.Parallel()
	abs, err := filepath.Abs("pw.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, name, source string
	}{
		{"PW=env:MY_PW", "PW", "env:MY_PW"},
		{"PW=file:/run/pw", "PW", "file:/run/pw"},
		{"PW=file:pw.txt", "PW", "file:" + abs}, // made absolute
		{"PW", "", ""},
		{"PW=MY_PW", "", ""},
		{"PW=vault:x", "", ""},
		{"PW=env:", "", ""},
		{"=env:X", "", ""},
	} {
		name, source, err := replay.ParseSecret(tc.in)
		if tc.name == "" {
			if err == nil {
				t.Errorf("ParseSecret(%q) = %q, %q, want an error", tc.in, name, source)
			}
			continue
		}
		if err != nil || name != tc.name || source != tc.source {
			t.Errorf("ParseSecret(%q) = %q, %q, %v; want %q, %q", tc.in, name, source, err, tc.name, tc.source)
		}
	}
}

// TestRunRefusesWhatItCannotReplayFaithfully: these are refused before
// any browser starts.
func TestRunRefusesWhatItCannotReplayFaithfully(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.db")
	store, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := store.PutConfig([]byte(`{"principal": "local"}`))
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.PutConfig([]byte(`{"principal": "other"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*evidence.Envelope{
		{Session: "noconfig", Command: "navigate", Decision: evidence.Decision{Allowed: true, Stage: "gate"}},
		{Session: "reloaded", Command: "navigate", ConfigSHA256: sum, Decision: evidence.Decision{Allowed: true, Stage: "gate"}},
		{Session: "reloaded", Command: "snapshot", ConfigSHA256: other, Decision: evidence.Decision{Allowed: true, Stage: "gate"}},
	} {
		if err := store.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ session, want string }{
		{"none", `no session "none" in ` + path + ` (evidence show`},
		{"noconfig", "recorded without its configuration"},
		{"reloaded", "changed configuration at record 2"},
	} {
		var out bytes.Buffer
		err := replay.Run(path, tc.session, replay.Options{}, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%s): %v, want %q", tc.session, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("Run(%s) printed before refusing:\n%s", tc.session, out.String())
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

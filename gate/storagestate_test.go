package gate_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// stateManifest declares the state commands, with a secret bound to one
// host of the scope.
const stateManifest = `
[tool]
name = "d"
[browser.scope]
allowed_domains = ["*.example.com", "example.com"]
blocked_domains = ["admin.example.com"]
[browser.commands.save_storage_state]
[browser.commands.load_storage_state]
[browser.files]
state_dir = %q
[secrets.PW]
env = "STATE_TEST_PW"
domains = ["login.example.com"]
`

// newStateFixture loads stateManifest with an owner-only state directory
// and the secret's value set.
func newStateFixture(t *testing.T) (*decideFixture, *toolclad.Manifest) {
	t.Setenv("STATE_TEST_PW", "correct horse battery")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m := testkit.Manifest(t, fmt.Sprintf(stateManifest, dir))
	f := &decideFixture{m: m, engine: testkit.Policies(t)}
	var err error
	if f.secrets, err = gate.NewSecrets(m); err != nil {
		t.Fatal(err)
	}
	return f, m
}

// TestLoadStorageStateIsDecidedOnTheFile: a load is refused, with nothing
// applied (the act never runs), when the state holds a cookie or local
// storage for a site outside the scope, when its file could not be
// trusted, or when a secret's value in it would go to a site off the
// secret's domains; a state all inside the scope goes on to the policies
// (which ask a human for a load).
func TestLoadStorageStateIsDecidedOnTheFile(t *testing.T) {
	f, m := newStateFixture(t)
	pw := f.secrets.HeldInBytes([]byte("x correct horse battery x"))
	if len(pw) != 1 {
		t.Fatalf("HeldInBytes found %d secrets in a text holding one", len(pw))
	}
	file := evidence.FileRef{Direction: "state_load", Name: "alice.json", Size: 10, SHA256: "00"}
	tests := []struct {
		name      string
		state     *gate.StorageState
		stage     evidence.Stage
		reason    string // "" : not refused before the policies
		approvals bool
	}{
		{"every site in scope", &gate.StorageState{File: file, Sites: []string{"https://www.example.com/", "http://example.com/"}}, "", "", true},
		{"a cookie of a host outside the scope", &gate.StorageState{File: file, Sites: []string{"https://www.example.com/", "http://evil.test/"}},
			evidence.StageScope, "http://evil.test/", false},
		{"local storage of a blocked origin", &gate.StorageState{File: file, Sites: []string{"https://admin.example.com:8443/"}},
			evidence.StageScope, "admin.example.com", false},
		{"a file not to trust", &gate.StorageState{File: file, Err: errors.New("alice.json has mode 0644")},
			evidence.StageArgs, "mode 0644", false},
		{"not observed", nil, evidence.StageObserve, "not observed", false},
		{"a secret's value for its own domain", &gate.StorageState{File: file, Sites: []string{"https://login.example.com/"}, Holds: pw}, "", "", true},
		{"a secret's value for another host of the scope", &gate.StorageState{File: file, Sites: []string{"https://login.example.com/", "https://www.example.com/"}, Holds: pw},
			evidence.StageSecrets, "secret PW", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := on("about:blank")
			fs.StorageState = tc.state
			v := gate.Decide(f.ask(t, m, "load_storage_state", map[string]any{"name": "alice"}, fs, nil))
			if tc.reason == "" {
				if v.Deny != nil || len(v.Approval) == 0 {
					t.Fatalf("deny %+v, approval %v: want the shipped policies to ask a human", v.Deny, v.Approval)
				}
				return
			}
			if v.Deny == nil || v.Deny.Stage != tc.stage || !strings.Contains(v.Deny.Reason, tc.reason) {
				t.Fatalf("deny = %+v, want stage %s naming %q", v.Deny, tc.stage, tc.reason)
			}
			if len(v.Approval) > 0 {
				t.Errorf("a refused load asks a human: %v", v.Approval)
			}
		})
	}
}

// TestSaveStorageStateRefusedWhereItCannotRun: the executor's refusal of a
// state command where it cannot run is the gate's refusal, before any
// policy or human.
func TestSaveStorageStateRefusedWhereItCannotRun(t *testing.T) {
	f, m := newStateFixture(t)
	fs := on("https://www.example.com/")
	fs.StorageState = &gate.StorageState{Err: errors.New("in live mode the user's browser keeps its own signed-in state")}
	v := gate.Decide(f.ask(t, m, "save_storage_state", map[string]any{"name": "alice"}, fs, nil))
	if v.Deny == nil || v.Deny.Stage != evidence.StageArgs || !strings.Contains(v.Deny.Reason, "live mode") {
		t.Fatalf("deny = %+v, want the refusal that says why", v.Deny)
	}
	fs.StorageState = &gate.StorageState{}
	if v := gate.Decide(f.ask(t, m, "save_storage_state", map[string]any{"name": "alice"}, fs, nil)); v.Deny != nil {
		t.Fatalf("a save in scope: %+v, want allowed", v.Deny)
	}
}

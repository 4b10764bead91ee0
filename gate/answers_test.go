package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestWithAddsASessionsAnswerOnly: a secret answer is added to a copy of
// the manifest's set, which the manifest's other sessions share and which
// keeps no trace of it; in the copy it is filled in for its placeholder,
// held to its domain, and typed into a text field (a one-time code's
// field is seldom a password field).
func TestWithAddsASessionsAnswerOnly(t *testing.T) {
	m := testkit.SecretManifest(t, "Manifest-Value-1")
	shared, err := gate.NewSecrets(m)
	if err != nil {
		t.Fatal(err)
	}
	answer := toolclad.AnsweredSecret("ANSWER_1", "OTP-731904", []string{"login.example.com"})
	mine, err := shared.With(answer)
	if err != nil {
		t.Fatal(err)
	}
	if got := shared.Fill("<ANSWER_1>"); got != "<ANSWER_1>" {
		t.Errorf("the shared set fills the answer in: %q", got)
	}
	if len(shared.All()) != len(m.Secrets) {
		t.Errorf("the shared set holds %d secrets, want the manifest's %d", len(shared.All()), len(m.Secrets))
	}
	if got := mine.Fill("code <ANSWER_1>"); got != "code OTP-731904" {
		t.Errorf("Fill = %q", got)
	}
	for _, sec := range m.Secrets {
		if !strings.Contains(mine.Fill(sec.Placeholder()), sec.Value()) {
			t.Errorf("the session's set lost the manifest's secret %s", sec.Name)
		}
	}
	field := func(url string) *gate.Element {
		return &gate.Element{Named: true, Label: "#code", Field: gate.Field{Field: true, Tag: "input", URL: url, MaxLength: -1}}
	}
	if err := mine.MayType("<ANSWER_1>", field("https://login.example.com/mfa")); err != nil {
		t.Errorf("typing the answer into a text field on its domain: %v", err)
	}
	if err := mine.MayType("<ANSWER_1>", field("https://evil.example/")); err == nil || !strings.Contains(err.Error(), "may only be typed on login.example.com") {
		t.Errorf("typing the answer on another host: %v", err)
	}
	if _, err := shared.With(toolclad.AnsweredSecret("ANSWER_2", "OTP-000000", []string{"[bad"})); err == nil {
		t.Error("an answer with a domain that is no pattern was added")
	}
}

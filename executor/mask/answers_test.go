package mask_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// answerMasker is the masker of a secret answer ANSWER_1 and a manifest's
// secret PW.
func answerMasker(t *testing.T, answer string) *mask.Masker {
	t.Helper()
	return mask.New([]*toolclad.Secret{
		toolclad.AnsweredSecret("ANSWER_1", answer, []string{"login.example.com"}),
		testkit.SecretManifest(t, "Zq8-Lm2_Vx7").Secrets[0],
	})
}

// TestSecretAnswerNotTheAgentsOwnText: an agent that wrote every six-digit
// code (in chunks, as type_text takes them) does not see the one the
// operator answered come back in clear where the page shows it: a secret
// answer is never the agent's own text. A manifest's secret still is.
func TestSecretAnswerNotTheAgentsOwnText(t *testing.T) {
	t.Parallel()
	m := answerMasker(t, "731904")
	var a mask.AgentTexts
	var chunk strings.Builder
	for i := range 1000000 {
		chunk.WriteString(strconv.Itoa(1000000 + i)[1:])
		chunk.WriteByte(' ')
		if chunk.Len() > 64000 {
			a.Note(m, []string{chunk.String()})
			chunk.Reset()
		}
	}
	a.Note(m, []string{chunk.String(), "Zq8-Lm2_Vx7"})
	agent := m.ForAgent(&a)
	if got := agent.Mask("your code is 731904"); got != "your code is [secret ANSWER_1]" {
		t.Errorf("the answer on the page, for the agent that wrote every code: %q", got)
	}
	if got := agent.Mask("you typed Zq8-Lm2_Vx7"); got != "you typed Zq8-Lm2_Vx7" {
		t.Errorf("the agent's own text of a manifest secret: %q", got)
	}
	if got := agent.Finish(agent.MaskSource("code 731904 here"), false); got != "code [secret ANSWER_1] here" {
		t.Errorf("MaskSource: %q", got)
	}
}

// TestFieldValueHoldingSecretAnswerHiddenWhole: a field whose value holds
// a secret answer among other text (the agent's list of codes typed into
// it) is hidden whole, in a snapshot's line and in HTML, so where the
// answer stands among the codes is not shown; the rest of the text, and a
// value without the answer, are left as they are.
func TestFieldValueHoldingSecretAnswerHiddenWhole(t *testing.T) {
	t.Parallel()
	m := answerMasker(t, "731904")
	cases := []struct{ in, want string }{
		{`[textbox "code" e3 value="000000 731903 731904 731905"] next`, `[textbox "code" e3 value="[secret ANSWER_1]"] next`},
		{`[textbox "code" e3 value="a \"q\" 731904 \\ b"] [textbox "name" e4 value="ann"]`, `[textbox "code" e3 value="[secret ANSWER_1]"] [textbox "name" e4 value="ann"]`},
		{`<input name="c" value="000000 &quot;x&quot; 731904 999999">`, `<input name="c" value="[secret ANSWER_1]">`},
		{`[textbox "code" e3 value="12 731904`, `[textbox "code" e3 value="[secret ANSWER_1]`}, // cut off: to the end
		{`[textbox "code" e3 value="000000 [secret ANSWER_1] 111111"]`, `[textbox "code" e3 value="[secret ANSWER_1]"]`},
		{`[textbox "code" e3 value="000000 111111"] the page says 731904`, `[textbox "code" e3 value="000000 111111"] the page says [secret ANSWER_1]`},
		{`[textbox "pw" e3 value="x Zq8-Lm2_Vx7 y"]`, `[textbox "pw" e3 value="x [secret PW] y"]`}, // a manifest secret: the run alone
	}
	for _, c := range cases {
		if got := m.Mask(c.in); got != c.want {
			t.Errorf("Mask(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	// The agent's own list of codes, typed into the field: hidden whole.
	var a mask.AgentTexts
	a.Note(m, []string{"000000 731903 731904 731905"})
	in := `[textbox "code" e3 value="000000 731903 731904 731905"]`
	if got := m.Finish(m.ForAgent(&a).MaskSource(in), false); got != `[textbox "code" e3 value="[secret ANSWER_1]"]` {
		t.Errorf("for the agent: %q", got)
	}
	// A label the agent wrote itself cannot split the value in two.
	in = `[textbox "code" e3 value="000000 [secret X] 731904 111111"]`
	if got := m.Mask(in); got != `[textbox "code" e3 value="[secret ANSWER_1]"]` {
		t.Errorf("a value split by a label: %q", got)
	}
}

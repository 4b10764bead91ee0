package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
)

// TestDecideArgumentsOnOneLine: a call with several bad arguments is
// refused with every problem in the reason, on one line joined by "; ",
// never with a line break (which the reply would show as a literal \n).
func TestDecideArgumentsOnOneLine(t *testing.T) {
	f := newDecideFixture(t)
	v := gate.Decide(f.ask(t, f.m, "navigate", map[string]any{"url": 7, "colour": "red", "wait": true}, on("https://example.com/"), nil))
	if v.Deny == nil || v.Deny.Stage != evidence.StageArgs {
		t.Fatalf("bad arguments: %+v, want a refusal at args", v.Deny)
	}
	reason := v.Deny.Reason
	if strings.ContainsAny(reason, "\n\r") || strings.Contains(reason, `\n`) {
		t.Errorf("the reason breaks its line: %q", reason)
	}
	for _, want := range []string{`argument "colour": unknown argument`, `argument "wait": unknown argument`, `argument "url": must be a string`, "; "} {
		if !strings.Contains(reason, want) {
			t.Errorf("the reason %q does not say %q", reason, want)
		}
	}
}

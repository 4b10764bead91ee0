package executor

import (
	"testing"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/browsergate/browsergate/toolclad"
)

// TestAgentTextsAreTheMCPSessions: what an agent wrote is its own in every
// session of its MCP session — on another tool, and after an expiry
// replaced one — and in no other MCP session's; it is forgotten when its
// MCP session ends.
func TestAgentTextsAreTheMCPSessions(t *testing.T) {
	m1 := testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4")
	m2 := testkit.SecretManifest(t, "Zq8-Lm2_Vx7-Kp4")
	e, err := New(Config{Manifests: []*toolclad.Manifest{m1, m2}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	shown := func(mcp string, m *toolclad.Manifest) bool {
		s, err := e.session(&toolclad.Call{SessionID: mcp, Manifest: m})
		if err != nil {
			t.Fatal(err)
		}
		return s.masker.Load().ForAgent(s.agent).Mask("?q=Zq8-Lm") == "?q=Zq8-Lm"
	}
	a1, _ := e.session(&toolclad.Call{SessionID: "a", Manifest: m1})
	a1.agent.Note(e.allSecrets.Load(), mask.ArgTexts(map[string]any{"url": "http://127.0.0.1/?q=Zq8-Lm"}))
	if !shown("a", m1) || !shown("a", m2) {
		t.Error("the agent's text is masked in a session of its own MCP session")
	}
	if shown("b", m1) {
		t.Error("the agent's text is shown to another MCP session")
	}
	renewed, err := e.renew(a1, "test")
	if err != nil || renewed == a1 || !shown("a", m1) {
		t.Errorf("after a renewal (%v), the agent's text is masked", err)
	}
	e.EndSession("a")
	if shown("a", m1) {
		t.Error("the agent's text is still its own after its MCP session ended")
	}
}

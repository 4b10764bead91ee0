package executor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/browsergate/browsergate/toolclad"
)

func secretManifest(t testing.TB, value string) *toolclad.Manifest {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteFile(t, dir, "pw", value)
	path := testkit.WriteFile(t, dir, "m.toml", `
[tool]
name = "s"
[browser.scope]
allowed_domains = ["*.example.com"]
[secrets.PW]
file = "pw"
domains = ["login.example.com", "*.auth.example.com"]
[browser.commands.type_text]
`)
	m, err := toolclad.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSecretDomains: a secret goes only into a named element whose page is
// on one of its domains, matched on the canonical host.
func TestSecretDomains(t *testing.T) {
	ss, err := newSecretSet(secretManifest(t, "hunter2hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url   string
		named bool
		ok    bool
	}{
		{"https://login.example.com/form", true, true},
		{"https://LOGIN.Example.COM./form", true, true},
		{"https://a.auth.example.com/", true, true},
		{"https://auth.example.com/", true, false},
		{"https://login.example.com.evil.test/", true, false},
		{"https://evil.test/?login.example.com", true, false},
		{"about:blank", true, false},
		{"https://login.example.com/form", false, false},
	} {
		err := ss.check("pw: <PW>", tc.url, tc.named)
		if (err == nil) != tc.ok {
			t.Errorf("check on %s (named %v) = %v, want ok=%v", tc.url, tc.named, err, tc.ok)
		}
	}
	if err := ss.check("no placeholder here", "https://evil.test/", false); err != nil {
		t.Errorf("text without a placeholder: %v", err)
	}
	if got := ss.fill("a <PW> b <PW>"); got != "a hunter2hunter2 b hunter2hunter2" {
		t.Errorf("fill = %q", got)
	}
}

// TestAgentTextsAreTheMCPSessions: what an agent wrote is its own in every
// session of its MCP session — on another tool, and after an expiry
// replaced one — and in no other MCP session's; it is forgotten when its
// MCP session ends.
func TestAgentTextsAreTheMCPSessions(t *testing.T) {
	m1 := secretManifest(t, "Zq8-Lm2_Vx7-Kp4")
	m2 := secretManifest(t, "Zq8-Lm2_Vx7-Kp4")
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
		return s.masker.ForAgent(s.agent).Mask("?q=Zq8-Lm") == "?q=Zq8-Lm"
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

// TestSecretHeldInFile: a file holds a secret's value anywhere, across
// the scanner's chunks too (at the 1 MiB boundary); a file with only a
// part of it does not.
func TestSecretHeldInFile(t *testing.T) {
	const value = `k& 9<Q!x&a 7>z`
	ss, err := newSecretSet(secretManifest(t, value))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		want       bool
	}{
		{"plain", "password=" + value + "\n", true},
		{"across chunks", strings.Repeat("a", 1<<20-5) + value + "tail", true},
		{"at the end", strings.Repeat("b", 3<<20) + value, true},
		{"a part", "password=" + value[:len(value)-1], false},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ss.heldIn(p)
		if err != nil || (len(got) == 1) != tc.want {
			t.Errorf("%s: heldIn = %v, %v; want held %v", tc.name, got, err, tc.want)
		}
	}
}

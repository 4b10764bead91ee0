package executor

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/browsergate/browsergate/examples/testkit"

	"github.com/browsergate/browsergate/toolclad"
)

func secretManifest(t *testing.T, value string) *toolclad.Manifest {
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

// TestMaskerForms: every spelling of the value is masked, in strings,
// nested values and log lines.
func TestMaskerForms(t *testing.T) {
	value := `p&ss<w>"rd/ 1`
	m := newMasker([]*toolclad.Manifest{secretManifest(t, value)})
	for _, form := range secretForms(value) {
		if got := m.mask("x " + form + " y"); strings.Contains(got, "ss") || !strings.Contains(got, "[secret PW]") {
			t.Errorf("form %q masked to %q", form, got)
		}
	}
	v := m.maskValue(map[string]any{"a": []any{"k=" + value}, "b": 3}).(map[string]any)
	if v["a"].([]any)[0] != "k=[secret PW]" || v["b"] != 3 {
		t.Errorf("maskValue = %v", v)
	}
	var buf bytes.Buffer
	var p atomic.Pointer[masker]
	p.Store(m)
	log := slog.New(&maskHandler{inner: slog.NewJSONHandler(&buf, nil), m: &p}).With("session", value)
	log.Info("typed "+value, "url", "https://x/?q="+value, slog.Group("g", "v", value), "err", errText(value))
	if strings.Contains(buf.String(), "ss<w>") || strings.Contains(buf.String(), "p\\u0026ss") || strings.Count(buf.String(), "[secret PW]") != 5 {
		t.Errorf("log line: %s", buf.String())
	}
	var none *masker
	if none.mask(value) != value {
		t.Error("a nil masker changed its input")
	}
}

type errText string

func (e errText) Error() string { return "failed with " + string(e) }

package gate_test

import (
	"testing"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
)

// TestSavePDFIsRefusedWhereASecretWasTyped: a PDF holds the page's text
// in glyph streams that the secrets' byte search cannot read, so a page a
// secret was typed on is not printed; elsewhere save_pdf is judged as
// any call.
func TestSavePDFIsRefusedWhereASecretWasTyped(t *testing.T) {
	f := newDecideFixture(t)
	dir := t.TempDir()
	m := testkit.Manifest(t, decideManifest+`
[browser.commands.save_pdf]
[browser.files]
download_dir = "`+dir+`"
`)
	secretHere := on("https://login.example.com/")
	secretHere.Typed = f.m.Secrets
	if d := gate.Decide(f.ask(t, m, "save_pdf", nil, secretHere, nil)).Deny; d == nil || d.Rule != "secret oracle" {
		t.Errorf("save_pdf on a secret's page: %+v, want the secret oracle refusal", d)
	}
	if d := gate.Decide(f.ask(t, m, "save_pdf", nil, on("https://login.example.com/"), nil)).Deny; d != nil {
		t.Errorf("save_pdf on a page with no secret typed refused: %+v", d)
	}
}

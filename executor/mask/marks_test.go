package mask_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// TestMaskerLeavesItsOwnWords: only the page's values are masked, never
// browsergate's words around them, whatever a secret shares with them: a
// secret holding "SECRET" masks neither its own label, nor page content's
// labels, nor a log line's message, stage, rule or reason. (A turn's
// reply, refusal and error: executor's TestMaskTurnLeavesItsOwnWords.)
func TestMaskerLeavesItsOwnWords(t *testing.T) {
	t.Parallel()
	const value = "xSECRETx99"
	m := newMasker(t, value)
	if got := m.Mask("[secret PW] and [part of secret PW]"); got != "[secret PW] and [part of secret PW]" {
		t.Errorf("the masker masked its own labels: %q", got)
	}
	// Page content masked as it was read keeps its labels, and the record
	// masks it again whole.
	src := m.MaskSource("page: " + value + " and SECRET")
	if got := m.Finish(src, true); got != "page: [secret PW] and [part of secret PW]" {
		t.Errorf("page content = %q", got)
	}
	// The agent's own text, left as written for the agent as the page is
	// read, is masked in the record.
	am := agentMasker(m, "SECRETx9")
	src = am.MaskSource("you searched for SECRETx9")
	if got, rec := m.Finish(src, false), m.Finish(src, true); got != "you searched for SECRETx9" || rec != "you searched for [part of secret PW]" {
		t.Errorf("the agent's own text: %q for the agent, %q in the record", got, rec)
	}
	var buf bytes.Buffer
	log := slog.New(mask.NewLogHandler(slog.NewJSONHandler(&buf, nil), func() *mask.Masker { return m }))
	log.Info("gate decision", "stage", "secrets", "rule", "secret domains", "url", "https://x.test/?v="+value,
		"reason", "secret PW was typed on this site, whose pages may then send requests only to login.example.com, not to x.test", "host", "x.test")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"msg": "gate decision", "stage": "secrets", "rule": "secret domains", "url": "https://x.test/?v=[secret PW]",
		"reason": "secret PW was typed on this site, whose pages may then send requests only to login.example.com, not to x.test"} {
		if line[k] != want {
			t.Errorf("log %s = %v, want %q", k, line[k], want)
		}
	}
}

// TestMaskerPagesKeepTheirMarks: a text split into pages (a long snapshot)
// may be cut inside page content; each page is marked as the whole was, so
// the record still masks the agent's own text at the top of a later page.
func TestMaskerPagesKeepTheirMarks(t *testing.T) {
	t.Parallel()
	m := newMasker(t, "xSECRETx99")
	src := agentMasker(m, "SECRETx9").MaskSource("xx SECRETx9 yy")
	cut := strings.Index(src, "SECRETx9")
	for i, page := range []string{pagetext.Balanced(src[:cut]), pagetext.Balanced(src[cut:])} {
		want := []string{"xx ", "[part of secret PW] yy"}[i]
		if got := m.Finish(page, true); got != want {
			t.Errorf("page %d in the record: %q, want %q", i+1, got, want)
		}
	}
}

package mask_test

import (
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/browsergate/browsergate/executor/mask"
)

// TestMaskerForAgent: the agent's own text comes back as it wrote it,
// also in the spelling the browser gives it (a query it wrote, canonicalised
// in the page's URL), so that what is masked does not tell a right guess
// from a wrong one; the full masker masks the right guess.
func TestMaskerForAgent(t *testing.T) {
	t.Parallel()
	const value = `k& 9<Q!x&a 7>z`
	full := newMasker(t, value)
	right, wrong := "k& 9<Q", "k& 9<q"
	for _, guess := range []string{right, wrong} {
		args := mask.ArgTexts(map[string]any{"url": "http://127.0.0.1/search?q=" + guess})
		agent := agentMasker(full, args...)
		shown := "http://127.0.0.1/search?q=" + strings.NewReplacer(" ", "%20", "<", "%3C").Replace(guess)
		if got := agent.Mask(shown); got != shown {
			t.Errorf("guess %q: the agent's own query came back as %q", guess, got)
		}
	}
	if got := full.Mask("?q=k&%209%3CQ"); got != "?q=[part of secret PW]" {
		t.Errorf("the full masker let the right guess through: %q", got)
	}
	if agent := agentMasker(full, "url", "http://127.0.0.1/"); agent != full {
		t.Error("texts without secret material should get the full masker itself")
	}
	// What the agent did not write is still masked in its reply.
	agent := agentMasker(full, "k& 9<Q")
	if got := agent.Mask("k& 9<Q, and the page shows k&amp; 9&lt;Q!x&amp;a"); got != "k& 9<Q, and the page shows [part of secret PW]" {
		t.Errorf("agent reply: %q", got)
	}
}

// agentMasker is m for the replies of a session whose agent wrote texts.
func agentMasker(m *mask.Masker, texts ...string) *mask.Masker {
	var a mask.AgentTexts
	a.Note(m, texts)
	return m.ForAgent(&a)
}

// TestMaskerForAgentAcrossCalls: what the agent wrote in any call of its
// session comes back as written in every later reply — the state line of
// the next call shows the URL it navigated to, a search page shows its
// query in its text — in whatever spelling, case or spacing the browser
// gives it back, so that a right and a wrong guess come back alike; what
// it did not write is masked, and the full masker masks the right guess.
func TestMaskerForAgentAcrossCalls(t *testing.T) {
	t.Parallel()
	const value = "Zq8-Lm2_Vx7 Kp4"
	full := newMasker(t, value)
	for _, guess := range []string{"Zq8-Lm", "Zq8-Lx", "q8-Lm2_Vx7", "zq8-lm2", "m2_Vx7  Kp4"} {
		var a mask.AgentTexts
		// Call 1: navigate; calls 2 to 40: other texts.
		a.Note(full, mask.ArgTexts(map[string]any{"url": "http://127.0.0.1/search?q=" + url.QueryEscape(guess)}))
		for i := range 40 {
			a.Note(full, mask.ArgTexts(map[string]any{"selector": fmt.Sprintf("#item-%d", i)}))
		}
		agent := full.ForAgent(&a)
		for _, shown := range []string{
			`[state] url="http://127.0.0.1/search?q=` + url.QueryEscape(guess) + `"`,
			"http://127.0.0.1/search?q=" + strings.ReplaceAll(url.PathEscape(guess), "%20", "+"),
			"Results for " + html.EscapeString(guess),
			"RESULTS FOR " + strings.ToUpper(guess),
			"results for " + collapse(guess),
		} {
			if got := agent.Mask(shown); got != shown {
				t.Errorf("guess %q: %q came back as %q", guess, shown, got)
			}
		}
	}
	var a mask.AgentTexts
	a.Note(full, []string{"url", "http://127.0.0.1/search?q=Zq8-Lm"})
	agent := full.ForAgent(&a)
	for in, want := range map[string]string{
		"page shows Zq8-Lm2_V":   "page shows [part of secret PW]", // more than the agent wrote
		"page shows m2_Vx7":      "page shows [part of secret PW]",
		"and " + value:           "and [secret PW]",
		"q=Zq8-Lm, q=ZQ8-LM":     "q=Zq8-Lm, q=ZQ8-LM",
		"?q=Zq8-Lm&v=Vx7+Kp4ab…": "?q=Zq8-Lm&v=[part of secret PW]ab…",
	} {
		if got := agent.Mask(in); got != want {
			t.Errorf("agent reply: mask(%q) = %q, want %q", in, got, want)
		}
	}
	if got := full.Mask("?q=Zq8-Lm"); got != "?q=[part of secret PW]" {
		t.Errorf("the full masker let the right guess through: %q", got)
	}
	// However much the agent writes, it keeps one piece per character of
	// each form at most.
	var b mask.AgentTexts
	r := []rune(value)
	for i := range len(r) {
		for j := i + mask.MinPart; j <= len(r); j++ {
			b.Note(full, []string{string(r[i:j]), strings.ToUpper(string(r[i:j])), url.QueryEscape(string(r[i:j]))})
		}
	}
	if n := len(b.Held()); n != 1 {
		t.Errorf("every piece of the value noted: %d pieces kept, want 1 (the value): %q", n, b.Held())
	}
}

// TestMaskerForAgentIsNoOracle: whatever the agent writes — pieces of the
// value and near misses, in random case and spelling — comes back as it
// wrote it, and as the browser respells it, in later replies of its
// session: whether it is masked never depends on the secret.
func TestMaskerForAgentIsNoOracle(t *testing.T) {
	t.Parallel()
	const value = `Zä8-Lö2_Vü7-Kß4`
	full := newMasker(t, value)
	rng := rand.New(rand.NewPCG(3, 2026))
	r := []rune(value)
	alphabet := []rune("Zä8-Lö2_Vü7-Kß4zÄLÖvÜkSsx9 ")
	masked := 0
	for range 3000 {
		lo := rng.IntN(len(r))
		g := []rune(string(r[lo : lo+1+rng.IntN(len(r)-lo)]))
		for i := range g {
			switch rng.IntN(6) {
			case 0:
				g[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				g[i] = unicode.SimpleFold(g[i])
			}
		}
		guess := string(g)
		if full.Mask(guess) != guess {
			masked++
		}
		var a mask.AgentTexts
		a.Note(full, []string{"http://127.0.0.1/search?q=" + url.QueryEscape(guess)})
		agent := full.ForAgent(&a)
		for _, shown := range []string{guess, url.QueryEscape(guess), strings.ToUpper(guess), strings.ToLower(guess), html.EscapeString(guess), numericRefs(guess)} {
			if got := agent.Mask(shown); got != shown {
				t.Fatalf("guess %q: %q came back as %q", guess, shown, got)
			}
		}
	}
	if masked < 100 {
		t.Errorf("only %d of the guesses held a piece of the value: the test tests little", masked)
	}
}

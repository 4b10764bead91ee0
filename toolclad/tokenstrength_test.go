package toolclad

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTokenStrengthRefusesGuessableTokens: tokens a person composes from
// the operator's name, the project's words, dictionary words, keyboard
// walks, runs and repeats come out under the operators' floor, however
// long they are.
func TestTokenStrengthRefusesGuessableTokens(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{
		"olga-operator-token-1234",
		"correcthorsebatterystaple",
		"qwertyuiopasdfghjklzxcvbnm",
		"1qaz2wsx3edc4rfv5tgb6yhn",
		"olga-operator-token-0123456789abcdef",
		"browsergate-console-olga-2026-11-28",
		"correcthorsebatterystaplecorrecthorse",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"12345678901234567890123456789012",
		"abcdefghijklmnopqrstuvwxyzabcdefgh",
		"Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!",
		"password-password-password-password",
		"qwertyqwertyqwertyqwertyqwertyqwerty",
	} {
		if bits, _ := TokenStrength(tok, "olga"); bits >= minOperatorTokenBits {
			t.Errorf("TokenStrength(%q) = %.0f bits, want under %d", tok, bits, minOperatorTokenBits)
		}
	}
}

// TestTokenStrengthTakesRandomTokens: random tokens made as the docs say
// (base64 of 32 bytes, hex of 16 bytes), and of 40 digits or 32 letters
// and digits, all hold far more than 80 bits; not one of 1,000 of each is
// refused, whatever words or dates they hold by chance. The source is
// seeded: a failure can be replayed.
func TestTokenStrengthTakesRandomTokens(t *testing.T) {
	t.Parallel()
	drawn := func(r *rand.Rand, alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	randomBytes := func(r *rand.Rand, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	formats := map[string]func(r *rand.Rand) string{
		"head -c 32 /dev/urandom | base64": func(r *rand.Rand) string { return base64.StdEncoding.EncodeToString(randomBytes(r, 32)) },
		"openssl rand -hex 16":             func(r *rand.Rand) string { return hex.EncodeToString(randomBytes(r, 16)) },
		"40 digits":                        func(r *rand.Rand) string { return drawn(r, "0123456789", 40) },
		"32 letters and digits": func(r *rand.Rand) string {
			return drawn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 32)
		},
	}
	// 200 tokens of each format: zxcvbn takes a few milliseconds a token,
	// many times that under the race detector, where make test runs it.
	const tokensPerFormat = 200
	seed := uint64(0)
	for name, make := range formats {
		seed++
		r := rand.New(rand.NewPCG(seed, 33))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			refused := 0
			for range tokensPerFormat {
				tok := make(r)
				if len(tok) < minOperatorToken {
					t.Fatalf("%q is shorter than %d characters", tok, minOperatorToken)
				}
				if bits, found := TokenStrength(tok, "olga"); bits < minOperatorTokenBits {
					refused++
					t.Errorf("TokenStrength(%q) = %.0f bits (%s), want %d or more", tok, bits, strings.Join(found, ", "), minOperatorTokenBits)
				}
			}
			if refused > 0 {
				t.Errorf("%d of %d refused", refused, tokensPerFormat)
			}
		})
	}
}

// TestTokenStrengthSaysWhatItFound: the pieces zxcvbn found are named by
// their kind, the operator's name among them, and never quoted.
func TestTokenStrengthSaysWhatItFound(t *testing.T) {
	t.Parallel()
	_, found := TokenStrength("xqvolk-password-1987", "xqvolk")
	got := strings.Join(found, "; ")
	for _, want := range []string{"the operator's name", "a common word"} {
		if !strings.Contains(got, want) {
			t.Errorf("found %q, want it to name %q", got, want)
		}
	}
	if strings.Contains(got, "xqvolk") || strings.Contains(got, "1987") {
		t.Errorf("found %q quotes the token", got)
	}
}

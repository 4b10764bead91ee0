package toolclad

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"testing"
)

// TestTokenStrength: tokens whose length hides how little they hold
// (one character repeated, a run of digits or letters, a short piece
// repeated, a keyboard pattern written twice) come out under the
// operators' floor; random tokens as the docs make them (base64, hex)
// and the composed tokens the tests use come out over it.
func TestTokenStrength(t *testing.T) {
	t.Parallel()
	weak := []string{
		"aaaaaaaaaaaaaaaaaaaaaaaa",
		"123456789012345678901234",
		"abcdefghijklmnopqrstuvwxyz",
		"0123456789abcdef01234567",
		"Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!",
		"password-password-password",
		"zyxwvutsrqponmlkjihgfedcba",
		"qwertyqwertyqwertyqwerty",
	}
	for _, tok := range weak {
		if bits := TokenStrength(tok); bits >= minOperatorTokenBits {
			t.Errorf("TokenStrength(%q) = %.0f bits, want under %d", tok, bits, minOperatorTokenBits)
		}
	}
	var raw [32]byte
	rand.Read(raw[:])
	strong := []string{
		base64.RawStdEncoding.EncodeToString(raw[:]),
		hex.EncodeToString(raw[:16]),
		"olga-operator-token-1234",
		"olga-operator-token-0123456789",
		"q7Rk2mWx9LpT4vHc8NzB3jYf",
	}
	for _, tok := range strong {
		if bits := TokenStrength(tok); bits < minOperatorTokenBits {
			t.Errorf("TokenStrength(%q) = %.0f bits, want %d or more", tok, bits, minOperatorTokenBits)
		}
	}
}

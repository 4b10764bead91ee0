package toolclad

import (
	"math"
	"strings"
	"unicode"
)

// minOperatorTokenBits is the least strength an operator token must have,
// as TokenStrength estimates it. An operator token answers held calls: it
// must stand up to guessing for as long as the daemon runs, at the rate a
// client that ignores the console's back-off can send (the right token is
// never held back, so every guess is checked). 80 bits is NIST SP 800-63B's
// floor for a look-up secret an attacker may guess offline many times over;
// a random token of 24 characters has more than 120.
const minOperatorTokenBits = 80

// TokenStrength estimates how many bits of guessing a token stands up to,
// from how it is written: each character adds the bits of the alphabet
// the token draws on (lower case, upper case, digits, the rest), unless it
// follows from what came before, which adds nothing: a character repeated
// ("aaaa"), a run continuing one step at a time ("1234", "abcd"), or a
// piece of three or more characters written before ("pass-pass"). The
// estimate is high for what a person composes from words (it knows no
// dictionary) and right for a random token; what it refuses is a token
// whose length hides how little it holds.
func TokenStrength(token string) float64 {
	rs := []rune(token)
	perChar := math.Log2(float64(alphabetOf(rs)))
	bits := 0.0
	for i, r := range rs {
		switch {
		case i > 0 && r == rs[i-1]:
		case i > 1 && r-rs[i-1] == rs[i-1]-rs[i-2] && (r-rs[i-1] == 1 || r-rs[i-1] == -1):
		case i >= 2 && strings.Contains(string(rs[:i]), string(rs[i-2:i+1])):
		default:
			bits += perChar
		}
	}
	return bits
}

// alphabetOf is the size of the alphabet a token draws on: the classes of
// character it has any of (26 lower-case letters, 26 upper-case, 10
// digits, 33 other printable ASCII characters; 100 for a character beyond
// ASCII, of which there are many but few anyone types).
func alphabetOf(rs []rune) int {
	var lower, upper, digit, other, wide bool
	for _, r := range rs {
		switch {
		case r > unicode.MaxASCII:
			wide = true
		case 'a' <= r && r <= 'z':
			lower = true
		case 'A' <= r && r <= 'Z':
			upper = true
		case '0' <= r && r <= '9':
			digit = true
		default:
			other = true
		}
	}
	n := 0
	for _, c := range []struct {
		has  bool
		size int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}, {wide, 100}} {
		if c.has {
			n += c.size
		}
	}
	return max(n, 2)
}

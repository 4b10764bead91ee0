package toolclad

import (
	"math"
	"slices"

	"github.com/trustelem/zxcvbn"
)

// minOperatorTokenBits is the least strength an operator token must have,
// as TokenStrength estimates it. An operator token answers held calls: it
// must stand up to guessing for as long as the daemon runs, at the rate a
// client that ignores the console's back-off can send (the right token is
// never held back, so every guess is checked). 2^80 guesses at a million a
// second, far more than one daemon's HTTP front answers, take more than
// 10^10 years; 80 bits is also NIST SP 800-63B's floor for a look-up
// secret an attacker may guess offline many times over. zxcvbn counts the
// guesses of an attacker who tries words, names, keyboard walks, dates,
// runs and repeats first, so what a person composes comes out at what it
// holds, not at what its length suggests.
const minOperatorTokenBits = 80

// tokenWords are words an attacker who knows the project would try first
// in a token, besides the operator's name.
var tokenWords = []string{"browsergate", "operator", "operators", "token", "agent", "console", "approve", "admin", "secret"}

// TokenStrength estimates how many bits of guessing a token stands up to
// (log2 of zxcvbn's guesses), for an attacker who knows the operator's
// name and the project's words, and says what guessable pieces zxcvbn
// found in it (their kinds, never their text: "a dictionary word", "a
// keyboard pattern", ...). zxcvbn counts 10 guesses for a character that
// is part of no pattern whatever the alphabet it was drawn from, so a
// random token comes out at about 3.3 bits a character, under what it
// holds: minOperatorToken is set for that.
func TokenStrength(token, operator string) (bits float64, found []string) {
	inputs := tokenWords
	if operator != "" {
		inputs = append(slices.Clone(tokenWords), operator)
	}
	r := zxcvbn.PasswordStrength(token, inputs)
	if r.Guesses < 1 { // not UTF-8: zxcvbn does not judge it
		return 0, []string{"text that is not UTF-8"}
	}
	for _, m := range r.Sequence {
		if kind := patternKind(m.Pattern, m.DictionaryName); kind != "" && !slices.Contains(found, kind) {
			found = append(found, kind)
		}
	}
	return math.Log2(r.Guesses), found
}

// patternKind names a zxcvbn pattern for an operator ("" for the
// characters it found no pattern in).
func patternKind(pattern, dictionary string) string {
	switch pattern {
	case "dictionary":
		if dictionary == "user_inputs" {
			return "the operator's name or a word of browsergate's"
		}
		return "a common word, name or password"
	case "spatial":
		return "a keyboard pattern"
	case "sequence":
		return "a sequence (abc, 1234)"
	case "repeat":
		return "a repeated piece"
	case "date":
		return "a date"
	case "regex":
		return "a year"
	}
	return ""
}

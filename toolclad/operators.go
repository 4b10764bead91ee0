package toolclad

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Operators are the people who watch the daemon and answer its held calls
// (the event stream, the console), each known by a token. The operator
// token file (serve --operator-token-file) holds one per line, as
// NAME:TOKEN, or a bare TOKEN for an operator named "operator"; blank
// lines and lines starting with # are skipped. The file must be readable
// by its owner alone.
type Operators struct {
	list []operator
}

type operator struct {
	name string
	hash [sha256.Size]byte
}

// minOperatorToken is the shortest operator token taken: an operator can
// approve what agents may not do alone, so the token must not be
// guessable. 32: zxcvbn (TokenStrength) counts 10 guesses a character
// that is part of no pattern, so a random token of 32 characters, which
// holds 128 bits as hex and more in any larger alphabet, comes out over
// minOperatorTokenBits even with the words and dates it holds by chance.
const minOperatorToken = 32

// howToMakeAToken is what an error about a weak or short token advises.
const howToMakeAToken = "make one at random: openssl rand -hex 16, or head -c 32 /dev/urandom | base64"

// LoadOperators reads an operator token file.
func LoadOperators(path string) (*Operators, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("operator token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("operator token file %s: readable by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("operator token file: %w", err)
	}
	return ParseOperators(path, data)
}

// ParseOperators reads an operator token file's contents; name is the
// file's name in its errors.
func ParseOperators(name string, data []byte) (*Operators, error) {
	ops := &Operators{}
	var errs []error
	seen := map[[sha256.Size]byte]int{}
	lines, err := OperatorLines(data)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	for _, l := range lines {
		n, who, token := l.Line, l.Name, l.Token
		switch {
		case !agentIDPattern.MatchString(who):
			errs = append(errs, fmt.Errorf("%s:%d: operator name %q: want 1 to 64 letters, digits, '_', '.' or '-'", name, n, who))
			continue
		case len(token) < minOperatorToken || strings.ContainsAny(token, " \t"):
			errs = append(errs, fmt.Errorf("%s:%d: %s's token: want %d or more characters without spaces; %s", name, n, who, minOperatorToken, howToMakeAToken))
			continue
		}
		if bits, found := TokenStrength(token, who); bits < minOperatorTokenBits {
			what := ""
			if len(found) > 0 {
				what = " (it holds " + strings.Join(found, ", ") + ")"
			}
			errs = append(errs, fmt.Errorf("%s:%d: %s's token is too easy to guess: about %.0f bits as zxcvbn estimates it%s, want %d or more; %s",
				name, n, who, bits, what, minOperatorTokenBits, howToMakeAToken))
			continue
		}
		h := sha256.Sum256([]byte(token))
		if first, dup := seen[h]; dup {
			errs = append(errs, fmt.Errorf("%s:%d: the same token as line %d: each operator needs a token of their own", name, n, first))
			continue
		}
		seen[h] = n
		ops.list = append(ops.list, operator{name: who, hash: h})
	}
	if len(ops.list) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no operator token in it", name))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ops, nil
}

// OperatorLine is one operator of an operator token file, as written.
type OperatorLine struct {
	Line        int
	Name, Token string
}

// OperatorLines are the operators an operator token file names, unchecked.
func OperatorLines(data []byte) ([]OperatorLine, error) {
	var out []OperatorLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		who, token, ok := strings.Cut(line, ":")
		if !ok {
			who, token = "operator", line
		}
		out = append(out, OperatorLine{Line: n, Name: strings.TrimSpace(who), Token: strings.TrimSpace(token)})
	}
	return out, sc.Err()
}

// Lookup returns the name of the operator whose token this is ("": none),
// comparing every operator's hash in constant time.
func (o *Operators) Lookup(token string) string {
	if o == nil || token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	found := ""
	for _, op := range o.list {
		if subtle.ConstantTimeCompare(sum[:], op.hash[:]) == 1 {
			found = op.name
		}
	}
	return found
}

// SharedWith names the operators whose token is also an agent's token: an
// agent holding it could answer its own held calls, so such a pair of
// files is refused.
func (o *Operators) SharedWith(as *Agents) []string {
	if o == nil || as == nil {
		return nil
	}
	var out []string
	for _, op := range o.list {
		for _, a := range as.list {
			if subtle.ConstantTimeCompare(op.hash[:], a.hash[:]) == 1 {
				out = append(out, fmt.Sprintf("operator %s and agent %s", op.name, a.ID))
			}
		}
	}
	return out
}

// CheckApart refuses an operator token file and an agents file that share
// a token.
func CheckApart(o *Operators, as *Agents) error {
	if shared := o.SharedWith(as); len(shared) > 0 {
		return fmt.Errorf("the same token for %s: an operator's token must not be an agent's (an agent could answer its own held calls)", strings.Join(shared, ", "))
	}
	return nil
}

// Has reports whether an agent of the file has this id.
func (as *Agents) Has(id string) bool {
	if as == nil {
		return false
	}
	for _, a := range as.list {
		if a.ID == id {
			return true
		}
	}
	return false
}

// Holds reports whether the operator named name still has the token whose
// SHA-256 is sum (a console sign-in ends when its token leaves the file).
func (o *Operators) Holds(name string, sum [sha256.Size]byte) bool {
	if o == nil {
		return false
	}
	held := false
	for _, op := range o.list {
		if op.name == name && subtle.ConstantTimeCompare(op.hash[:], sum[:]) == 1 {
			held = true
		}
	}
	return held
}

// GroupsOf are the groups of the agent with this id (nil: none, or no such
// agent).
func (as *Agents) GroupsOf(id string) []string {
	if as == nil {
		return nil
	}
	for _, a := range as.list {
		if a.ID == id {
			return a.Groups
		}
	}
	return nil
}

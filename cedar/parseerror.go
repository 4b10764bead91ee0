package cedar

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// cedar-go reports a syntax error as `parse error at <input>:L:C "TEXT":
// WHAT` (the parser) or `<input>:L:C: WHAT` (the scanner), against
// "<input>" rather than the file, in its own words ("exact got action want
// ,", "invalid primary"), and mostly at the token after the one that was
// wrong (its parser steps past a token before it finds the token wrong).
// newParseError reads that back: the file, the position of the token that
// was wrong, and "expected …, found …".
var (
	parserErrorRE  = regexp.MustCompile(`^(?:parser error: )?parse error at [^:]*:(\d+):(\d+) ("(?:[^"\\]|\\.)*"): (.*)$`)
	scannerErrorRE = regexp.MustCompile(`^(?:parser error: )?[^:]*:(\d+):(\d+): (.*)$`)
	exactRE        = regexp.MustCompile(`^exact got (.*) want (.*)$`)
	listRE         = regexp.MustCompile(`^got (.*) want ,$`)
	effectRE       = regexp.MustCompile(`^unexpected effect: (.*)$`)
)

// scannerWords say what cedar-go's scanner means.
var scannerWords = map[string]string{
	"literal not terminated": `expected the closing " of a string, found the end of the file`,
	"comment not terminated": `expected the closing */ of a comment, found the end of the file`,
}

// expectations turn cedar-go's words for what it wanted into a reader's.
var expectations = map[string]string{
	"expected ident or reserved keyword": `an annotation name after "@"`,
	"expected string":                    "a string",
	"expected ident":                     "a name",
	"expected ident after dot":           `an attribute name after "."`,
	"expected ident or string":           "an attribute name or a string",
	"expected string literal":            `a string pattern after "like"`,
	"invalid primary":                    "an expression (a literal, principal, action, resource, context, an entity, [a set], {a record} or (…))",
}

func newParseError(path string, src []byte, err error) *ParseError {
	msg := err.Error()
	if m := scannerErrorRE.FindStringSubmatch(msg); m != nil && !parserErrorRE.MatchString(msg) {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		return &ParseError{File: path, Line: line, Column: col, Msg: cmp.Or(scannerWords[m[3]], m[3])}
	}
	m := parserErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return &ParseError{File: path, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	what := m[4]
	toks := cedarTokens(src)
	at := slices.IndexFunc(toks, func(t token) bool { return t.line == line && t.col == col })
	if at < 0 { // not where the tokens say: keep cedar-go's words and place
		return &ParseError{File: path, Line: line, Column: col, Msg: "near " + m[3] + ": " + what}
	}
	// wrong is the token that was wrong: the one reported, or the one
	// before it, which the parser had already stepped past.
	wrong := at
	stepped := func(text string) {
		if !(toks[at].eof && text == "") && at > 0 && toks[at-1].text == text {
			wrong = at - 1
		}
	}
	var expected string
	switch {
	case exactRE.MatchString(what):
		g := exactRE.FindStringSubmatch(what)
		stepped(g[1])
		expected = strconv.Quote(g[2])
	case listRE.MatchString(what):
		expected = `"," or the end of the list`
	case effectRE.MatchString(what):
		stepped(effectRE.FindStringSubmatch(what)[1])
		expected = `"permit" or "forbid" (after any @annotations)`
	case what == "unexpected token":
		steppedPast(toks, at, &wrong)
		return &ParseError{File: path, Line: toks[wrong].line, Column: toks[wrong].col, Msg: "unexpected " + toks[wrong].describe()}
	case expectations[what] != "":
		steppedPast(toks, at, &wrong)
		expected = expectations[what]
	default:
		return &ParseError{File: path, Line: line, Column: col, Msg: what + ", at " + toks[at].describe()}
	}
	return &ParseError{File: path, Line: toks[wrong].line, Column: toks[wrong].col, Msg: "expected " + expected + ", found " + toks[wrong].describe()}
}

// steppedPast moves wrong to the token before at, which the parser took
// and found wrong, unless at is the end of the file after a token that
// wants more (".", "==", "(", …): then the end itself was wrong.
func steppedPast(toks []token, at int, wrong *int) {
	if at == 0 {
		return
	}
	if toks[at].eof && slices.Contains(wantsMore, toks[at-1].text) {
		return
	}
	*wrong = at - 1
}

// wantsMore are the tokens after which the end of a file is what is wrong.
var wantsMore = []string{".", "::", "@", "(", "[", "{", ",", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "+", "-", "*", "!",
	"in", "has", "like", "is", "if", "then", "else", "when", "unless", "permit", "forbid", "principal", "action", "resource"}

// token is one Cedar token, where it starts (1-based line, and column in
// characters, as cedar-go counts them).
type token struct {
	text      string
	line, col int
	eof       bool
}

func (t token) describe() string {
	if t.eof {
		return "the end of the file"
	}
	return strconv.Quote(t.text)
}

// cedarTokens splits src into Cedar's tokens as cedar-go's scanner does,
// for finding them by position: names, numbers, strings, the two-character
// operators and single characters; comments and spaces are skipped. It
// ends with the end-of-file token.
func cedarTokens(src []byte) []token {
	s := string(src)
	var out []token
	line, col := 1, 1
	advance := func(n int) {
		for _, r := range s[:n] {
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		s = s[n:]
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		n := 0
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			advance(size)
			continue
		case strings.HasPrefix(s, "//"):
			n = strings.IndexByte(s, '\n')
			if n < 0 {
				n = len(s)
			}
			advance(n)
			continue
		case strings.HasPrefix(s, "/*"):
			n = strings.Index(s[2:], "*/")
			if n < 0 {
				n = len(s) - 4
			}
			advance(min(n+4, len(s)))
			continue
		case r == '"':
			n = 1
			for n < len(s) && s[n] != '"' {
				if s[n] == '\\' {
					n++
				}
				n++
			}
			n = min(n+1, len(s))
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			n = strings.IndexFunc(s, func(r rune) bool {
				return r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9')
			})
		case r >= '0' && r <= '9':
			n = strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		default:
			n = size
			for _, op := range []string{"::", "==", "!=", "<=", ">=", "&&", "||"} {
				if strings.HasPrefix(s, op) {
					n = 2
				}
			}
		}
		if n < 0 {
			n = len(s)
		}
		out = append(out, token{text: s[:n], line: line, col: col})
		advance(n)
	}
	return append(out, token{line: line, col: col, eof: true})
}

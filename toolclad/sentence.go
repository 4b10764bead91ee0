package toolclad

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// joinSentences joins a description and the text browsergate adds after
// it so that each sentence ends: a manifest's description without a final
// period ("Browse the docs") would otherwise run into the next sentence
// ("Browse the docs Page text in results …"). a's trailing white space
// goes; a period is added unless a already ends a sentence (".", "!",
// "?", "…", or one of them before closing quotes or brackets).
func joinSentences(a, b string) string {
	a = strings.TrimRightFunc(a, unicode.IsSpace)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return endSentence(a) + " " + b
}

// endSentence adds a period to s unless it ends a sentence already; a
// dangling comma, colon or semicolon gives way to it.
func endSentence(s string) string {
	s = strings.TrimRightFunc(strings.TrimRight(s, ",:;"), unicode.IsSpace)
	rest := strings.TrimRight(s, `"')]}»”’`)
	r, _ := utf8.DecodeLastRuneInString(rest)
	switch r {
	case '.', '!', '?', '…':
		return s
	}
	return s + "."
}

package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// shellWords splits a line as a POSIX shell splits words with single
// quotes and backslashes in them (all commandLine writes).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted, escaped := false, false, false
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case !quoted && r == '\\':
			escaped, inWord = true, true
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestDemoPrintsCommandsThatRun: the lines the demo ends with are
// commands of this binary whose flags parse, and a shell gives them back
// the arguments the demo meant, paths with spaces and quotes included.
func TestDemoPrintsCommandsThatRun(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"demo-evidence.db", "/tmp/my evidence/it's.db"} {
		cmds := demoEvidenceCommands(path, "demo-20261128T122154-76172422a102", []string{"--secret", "DEMO_PASSWORD=file:examples/demo-password.txt"})
		var names []string
		for _, args := range cmds {
			line := builtCommandLine(args)
			words := shellWords(t, line)
			if words[0] != "./browsergate" || !slices.Equal(words[1:], args) {
				t.Fatalf("%q reads back as %q, want ./browsergate %q", line, words, args)
			}
			c, rest, err := lookup(words[1:])
			if err != nil || c == nil {
				t.Fatalf("%q: not a command: %v", line, err)
			}
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.setup(fs)
			if err := fs.Parse(rest); err != nil || fs.NArg() != c.positional {
				t.Errorf("%q: its flags do not parse: %v (%d argument(s) left)", line, err, fs.NArg())
			}
			if fs.Lookup("evidence").Value.String() != path {
				t.Errorf("%q: --evidence is %q, want %q", line, fs.Lookup("evidence").Value, path)
			}
			names = append(names, c.name)
		}
		if want := []string{"evidence show", "evidence show", "evidence verify", "evidence replay", "evidence export"}; !slices.Equal(names, want) {
			t.Errorf("the demo prints %q, want %q", names, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"demo-evidence.db":          "demo-evidence.db",
		"NAME=file:a/b.txt":         "NAME=file:a/b.txt",
		"a b":                       "'a b'",
		"it's":                      `'it'\''s'`,
		"":                          "''",
		"$HOME":                     "'$HOME'",
		"x;rm -rf ~":                "'x;rm -rf ~'",
		"demo-20261128T122154-76ab": "demo-20261128T122154-76ab",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

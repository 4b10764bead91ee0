package main

import (
	"flag"
	"io"
	"strings"
)

var demoCommand = &command{
	name:     "demo",
	synopsis: "[--evidence FILE] [--manifest FILE] [--policies DIR]",
	summary: "Run the quick start: a governed browsing session against the bundled demo site (127.0.0.1) with a canary\n" +
		"outside the scope (127.0.0.2), then the evidence timeline, verify and replay. Run it from the repository root.\n" +
		"The release binary is built without it: go run -tags demo ./cmd/browsergate demo (make demo).",
	setup: func(fs *flag.FlagSet) action {
		o := &demoOptions{}
		fs.StringVar(&o.evidence, "evidence", "demo-evidence.db", "bbolt evidence `FILE`")
		fs.StringVar(&o.manifest, "manifest", "examples/demo.toml", "the demo manifest `FILE`")
		fs.StringVar(&o.policies, "policies", "policies", "Cedar policy `DIR`")
		return func(_ []string, stdout, stderr io.Writer) error { return runDemo(o, stdout, stderr) }
	},
}

// demoOptions are the flags of `browsergate demo`.
type demoOptions struct {
	evidence, manifest, policies string
}

// demoEvidenceCommands are the commands a reader runs on the demo's
// evidence file to read, check and replay it again, each as the arguments
// after "browsergate": the demo runs the first, third and fourth itself,
// and ends by printing them all (the release binary has every one).
func demoEvidenceCommands(evidencePath, session string, secretArgs []string) [][]string {
	return [][]string{
		{"evidence", "show", "--evidence", evidencePath, "--session", session},
		{"evidence", "show", "--evidence", evidencePath, "--summary"},
		{"evidence", "verify", "--evidence", evidencePath},
		append([]string{"evidence", "replay", "--evidence", evidencePath, "--session", session}, secretArgs...),
		{"evidence", "export", "--evidence", evidencePath, "--format", "html", "--out", "demo-report.html"},
	}
}

// commandLine is a browsergate command as a shell line, each argument
// quoted where a shell would read it otherwise (a path with a space).
func commandLine(args []string) string {
	quoted := make([]string, 0, len(args)+1)
	quoted = append(quoted, "browsergate")
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	return strings.Join(quoted, " ")
}

// builtCommandLine is commandLine for the binary make build leaves in the
// repository root: the demo itself runs as go run, so a reader who typed
// make demo has no browsergate on their PATH, and "browsergate …" as
// printed would not be found.
func builtCommandLine(args []string) string {
	return "./" + commandLine(args)
}

// shellQuote leaves a word of plain characters as it is and puts anything
// else between single quotes, which a POSIX shell reads literally (a
// single quote inside written '\”).
func shellQuote(s string) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=,@%+", r))
	})
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

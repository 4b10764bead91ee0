// Command browsergate is a policy-governed browser for AI agents, served
// over MCP. See the README for the quick start.
//
//	browsergate serve    --manifest FILE [--manifest FILE...] --policies DIR --evidence FILE
//	browsergate check    --manifest FILE [--manifest FILE...] --policies DIR
//	browsergate policy test --policies DIR --command C [...]
//	browsergate evidence show|verify|export|keygen|prune|replay --evidence FILE [...]
//	browsergate approvals list|approve ID|deny ID --evidence FILE
//	browsergate demo     [--evidence FILE]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `usage:
  browsergate serve    --manifest FILE [--manifest FILE...] --policies DIR --evidence FILE [--tool-separator .|_] [--principal ID]
                       [--approvals-socket PATH] [--approval-timeout 2m] [--elicitation] [--watch] [--signing-key FILE]
  browsergate approvals list             --evidence FILE | --socket PATH
  browsergate approvals approve|deny ID  --evidence FILE | --socket PATH [--by NAME] [--note TEXT]
  browsergate check    --manifest FILE [--manifest FILE...] --policies DIR
  browsergate policy test --policies DIR (--request FILE | --command C [--url U] [--manifest FILE] [--set S]
                       [--authenticated] [--has-forms] [--risk-tier T] [--approved] [--counter n=N] [--arg k=v]) [--expect allow|deny]
` + evidenceLines + `  browsergate demo     [--evidence FILE] [--chromium PATH]
`

// errUsage marks a command-line mistake: exit status 2.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:], stderr)
	case "check":
		err = check(args[1:], stdout)
	case "evidence":
		if len(args) > 1 && args[1] == "replay" {
			err = replayCmd(args[2:], stdout)
		} else {
			err = evidenceCmd(args[1:], stdout)
		}
	case "policy":
		err = policyCmd(args[1:], stdout)
	case "approvals":
		err = approvalsCmd(args[1:], stdout)
	case "demo":
		err = demo(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage) || errors.Is(err, flag.ErrHelp):
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "browsergate:", strings.TrimPrefix(err.Error(), "usage: "))
		}
		fmt.Fprint(stderr, usage)
		return 2
	default:
		fmt.Fprintln(stderr, "browsergate:", err)
		return 1
	}
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parse parses a subcommand's flags, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s: unexpected argument %q", errUsage, fs.Name(), fs.Arg(0))
	}
	return nil
}

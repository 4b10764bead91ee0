// Command browsergate is a policy-governed browser for AI agents, served
// over MCP. See the README for the quick start and docs/ for the manual; `browsergate -h` lists the
// commands and `browsergate COMMAND -h` a command's flags.
//
//	browsergate serve    --manifest FILE [--manifest FILE...] --policies DIR --evidence FILE [...]
//	browsergate check    --manifest FILE [--manifest FILE...] --policies DIR
//	browsergate policy test --policies DIR (--request FILE | --command C [...])
//	browsergate approvals list|approve ID|deny ID --evidence FILE | --socket PATH
//	browsergate evidence show|verify|export|keygen|prune|replay [...]
//	browsergate call     --url URL --token-file FILE [TOOL [JSON]]... | [TOOL [JSON]]... -- SERVE-FLAGS...
//	browsergate demo     [--evidence FILE]   (built with -tags demo)
//	browsergate init     URL [--dir DIR]
//	browsergate version  (or --version)
//
// This package holds the command line only: flags, wiring and printing.
// The work is done by the packages it wires together (executor and its
// approval/operator, reload and replay subpackages, toolclad, cedar,
// evidence).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// errUsage marks a command-line mistake: exit status 2, with the usage.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status: 0 on
// success and for -h, 1 when the command failed, 2 for a usage mistake.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage())
		return 2
	}
	if isHelp(args[0]) || args[0] == "help" {
		return help(args[1:], stdout, stderr)
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, rest, err := lookup(args)
	if err != nil {
		fmt.Fprintln(stderr, "browsergate:", strings.TrimPrefix(err.Error(), "usage: "))
		fmt.Fprint(stderr, groupUsage(args[0]))
		return 2
	}
	if cmd == nil { // a group asked for help: `evidence -h`
		fmt.Fprint(stdout, groupUsage(args[0]))
		return 0
	}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	act := cmd.setup(fs)
	positional, err := parseFlags(fs, rest, cmd.positional)
	if err == nil {
		err = act(positional, stdout, stderr)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		writeUsage(stdout, cmd, fs)
		return 0
	case errors.Is(err, errUsage):
		// The reason, and where the flags are: the whole flag reference
		// after it (sixty lines for serve) would scroll the reason away.
		fmt.Fprintln(stderr, "browsergate:", strings.TrimPrefix(err.Error(), "usage: "))
		fmt.Fprintln(stderr, helpHint(cmd))
		return 2
	default:
		fmt.Fprintln(stderr, "browsergate:", err)
		return 1
	}
}

// help is `browsergate -h`, `browsergate help` and `browsergate help
// COMMAND`. Help about help (`help help`, `help -h`) is the top-level
// usage: handing it on to run as "help -h" would come back here forever.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || isHelp(args[0]) {
		fmt.Fprint(stdout, topUsage())
		return 0
	}
	return run(append(args, "-h"), stdout, stderr)
}

// helpHint is the line a usage mistake ends with: where the command's
// flags are described.
func helpHint(c *command) string {
	return "run `browsergate help " + c.name + "` for its flags"
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// parseFlags parses a command's flags and returns its positional
// arguments, at most max of them; flags may come before or after them.
// Flag errors are usage errors; -h and --help are flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, max int) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// After "--" every argument is positional.
		terminated := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
		take := 1
		if terminated {
			take = len(rest)
		}
		if len(positional)+take > max {
			return nil, fmt.Errorf("%w: %s: unexpected argument %q", errUsage, fs.Name(), rest[max-len(positional)])
		}
		positional = append(positional, rest[:take]...)
		args = rest[take:]
	}
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// A command is one subcommand of browsergate. Its flags are declared by
// setup on a fresh flag set, so that -h, the usage text and the test that
// holds them together all read the same flags.
type command struct {
	name       string // as typed: "serve", "evidence show"
	synopsis   string // what follows the name: every flag it has; lines after the first are continuations
	summary    string // what the command does, in a sentence or two
	positional int    // how many positional arguments it takes (approvals approve|deny: the id)
	setup      func(fs *flag.FlagSet) action
}

// action runs a command once its flags are parsed, with its positional
// arguments.
type action func(args []string, stdout, stderr io.Writer) error

// commands are every command, in the order the usage lists them.
var commands = []*command{
	serveCommand,
	checkCommand,
	doctorCommand,
	policyTestCommand,
	approvalsListCommand,
	approvalsWatchCommand,
	approvalsDecideCommand("approve"),
	approvalsDecideCommand("deny"),
	approvalsAnswerCommand,
	evidenceShowCommand,
	evidenceVerifyCommand,
	evidenceExportCommand,
	evidenceConfigCommand,
	evidenceKeygenCommand,
	evidencePruneCommand,
	evidenceReplayCommand,
	eventsCommand,
	callCommand,
	demoCommand,
	initCommand,
	versionCommand,
}

// lookup finds the command args start with and returns it with the rest
// of args. For a group (`evidence`) followed by -h it returns no command
// and no error.
func lookup(args []string) (*command, []string, error) {
	for _, c := range commands {
		if c.name == args[0] {
			return c, args[1:], nil
		}
	}
	subs := groupCommands(args[0])
	if len(subs) == 0 {
		return nil, nil, fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	var names []string
	for _, c := range subs {
		names = append(names, strings.TrimPrefix(c.name, args[0]+" "))
	}
	switch {
	case len(args) == 1:
		return nil, nil, fmt.Errorf("%w: %s needs a subcommand: %s", errUsage, args[0], orList(names))
	case isHelp(args[1]) || args[1] == "help":
		return nil, nil, nil
	}
	for _, c := range subs {
		if c.name == args[0]+" "+args[1] {
			return c, args[2:], nil
		}
	}
	return nil, nil, fmt.Errorf("%w: unknown %s subcommand %q (want %s)", errUsage, args[0], args[1], orList(names))
}

// groupCommands are the commands whose name starts with the word group.
func groupCommands(group string) []*command {
	var out []*command
	for _, c := range commands {
		if strings.HasPrefix(c.name, group+" ") {
			out = append(out, c)
		}
	}
	return out
}

func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// topUsage is `browsergate -h`: every command's synopsis.
func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: browsergate COMMAND [flags]\n\n")
	for _, c := range commands {
		writeSynopsis(&b, "  ", c)
	}
	b.WriteString("\nRun \"browsergate COMMAND -h\" for a command's flags, with their descriptions and defaults;\n" +
		"\"browsergate --version\" is \"browsergate version\".\n")
	return b.String()
}

// groupUsage is the usage of the commands of a group (`evidence -h`), or
// the top-level usage when word is not a group.
func groupUsage(word string) string {
	subs := groupCommands(word)
	if len(subs) == 0 {
		return topUsage()
	}
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range subs {
		writeSynopsis(&b, "  ", c)
	}
	fmt.Fprintf(&b, "\nRun \"browsergate %s SUBCOMMAND -h\" for a subcommand's flags.\n", word)
	return b.String()
}

// writeSynopsis writes "browsergate NAME SYNOPSIS", continuation lines
// aligned under the first flag.
func writeSynopsis(w io.Writer, prefix string, c *command) {
	head := prefix + "browsergate " + c.name
	lines := strings.Split(c.synopsis, "\n")
	if lines[0] != "" {
		head += " " + lines[0]
	}
	fmt.Fprintln(w, head)
	pad := strings.Repeat(" ", len(prefix+"browsergate "+c.name+" "))
	for _, l := range lines[1:] {
		fmt.Fprintln(w, pad+strings.TrimSpace(l))
	}
}

// writeUsage is `browsergate NAME -h`: the synopsis, what the command
// does, and every flag with its description and default.
func writeUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	writeSynopsis(w, "usage: ", c)
	fmt.Fprintf(w, "\n%s\n", c.summary)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n        %s", strings.ReplaceAll(usage, "\n", "\n        "))
		if def := defaultText(f); def != "" {
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	})
}

// defaultText is a flag's default as -h shows it: quoted for a string,
// nothing when it is the zero value.
func defaultText(f *flag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf("%q", f.DefValue)
		}
	}
	return f.DefValue
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// errInvalid marks a check that found problems (already printed).
var errInvalid = errors.New("invalid configuration")

// check validates manifests and policies, printing every problem, and
// summarises the tools of a valid set.
func check(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var manifests multiFlag
	fs.Var(&manifests, "manifest", "ToolClad manifest (repeatable)")
	policies := fs.String("policies", "", "directory of Cedar policies")
	sep := fs.String("tool-separator", ".", "separator in tool names")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(manifests) == 0 || *policies == "" {
		return fmt.Errorf("%w: check needs --manifest and --policies", errUsage)
	}
	ms, merr := toolclad.LoadFiles(manifests)
	var serr error
	if merr == nil {
		_, serr = executor.Scopes(ms) // what serve would refuse
	}
	engine, perr := cedar.LoadDir(*policies)
	var terr error
	if perr == nil {
		terr = runPolicyTests(engine, *policies) // policy changes are tested like code
	}
	problems := 0
	for _, err := range []error{merr, serr, perr, terr} {
		if err == nil {
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if line != "" {
				fmt.Fprintln(stdout, line)
				problems++
			}
		}
	}
	if problems > 0 {
		return fmt.Errorf("%w: %d problem(s)", errInvalid, problems)
	}
	for _, m := range ms {
		fmt.Fprintf(stdout, "%s: tool %q, connect=%s, %d command(s), scope allowed=%v blocked=%v allow_external=%v\n",
			m.Path, m.Tool.Name, m.Browser.Connect, len(m.Commands),
			m.Browser.Scope.AllowedDomains, m.Browser.Scope.BlockedDomains, m.Browser.Scope.AllowExternal)
		for _, c := range m.Commands {
			flags := "risk=" + c.RiskTier
			if c.HumanApproval {
				flags += ", human approval"
			}
			fmt.Fprintf(stdout, "  %-32s %s\n", toolclad.ToolName(m, c, *sep), flags)
		}
	}
	fmt.Fprintf(stdout, "%s: %d polic(ies), checked against %s\n", *policies, len(engine.Policies()), engine.SchemaFile())
	if n := policyTestCount(engine, *policies); n > 0 {
		fmt.Fprintf(stdout, "%s: %d policy test(s) passed\n", filepath.Join(*policies, cedar.PolicyTestsFile), n)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

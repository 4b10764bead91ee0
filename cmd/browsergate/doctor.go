package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/browsergate/browsergate/toolclad"
)

var doctorCommand = &command{
	name: "doctor",
	synopsis: `--manifest FILE [--manifest FILE...] --policies DIR [--agents FILE] [--operator-token-file FILE]
		[--http ADDR] [--signing-key FILE] [--gate-listen IP:PORT]`,
	summary: "The posture of a daemon at a glance: check's validation and summary, then a warning for each risky\n" +
		"choice of the manifests, policies and the serve flags given (live mode, a live endpoint where no browser answers,\n" +
		"and in the user's context a browser\n" +
		"whose \"Preload pages\" is on or cannot be asked, allow_external, wide private grants,\n" +
		"* domains, execute_js or submit_form without approval, a listener beyond loopback, no signing key, root);\n" +
		"with --gate-listen, the conformance probe on every endpoint of each remote manifest's pool.",
	setup: func(fs *flag.FlagSet) action {
		var manifests multiFlag
		fs.Var(&manifests, "manifest", "ToolClad manifest `FILE` (repeatable), as serve gets them")
		policies := fs.String("policies", "", "Cedar policy `DIR`, as serve gets it")
		agents := fs.String("agents", "", "the agents `FILE` serve gets (checked, and its agents listed)")
		operators := fs.String("operator-token-file", "", "the operators' token `FILE` serve gets (checked)")
		addr := fs.String("http", "", "the `ADDR` serve --http listens on")
		key := fs.String("signing-key", "", "the signing key `FILE` serve gets (checked)")
		gateListen := fs.String("gate-listen", "", "an `IP:PORT` the pool's hosts reach (serve's --gate-listen, while serve is not running): each remote manifest's pool browsers are probed as a session's acquire probes them")
		return func(_ []string, stdout, _ io.Writer) error {
			if len(manifests) == 0 || *policies == "" {
				return fmt.Errorf("%w: doctor needs --manifest and --policies", errUsage)
			}
			sc := serveChoices{known: true, http: *addr, signingKey: *key != "", root: os.Geteuid() == 0}
			if *key != "" {
				if _, err := evidenceOptions(*key); err != nil {
					return err
				}
			}
			var err error
			if *agents != "" {
				if sc.agents, err = toolclad.LoadAgents(*agents); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "%s: %d agent(s): %v\n", *agents, len(sc.agents.IDs()), sc.agents.IDs())
			} else if *addr != "" {
				return fmt.Errorf("%w: --http needs --agents, as serve does", errUsage)
			}
			if *operators != "" {
				if sc.operators, err = toolclad.LoadOperators(*operators); err != nil {
					return err
				}
				if err := toolclad.CheckApart(sc.operators, sc.agents); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "%s: operators may watch /events and use /console/\n", *operators)
			}
			if err := check(manifests, *policies, ".", true, sc, stdout); err != nil {
				return err
			}
			return probePools(manifests, *gateListen, stdout)
		}
	},
}

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// errExpectation marks a `policy test --expect` whose decision differed:
// exit status 1, after the decision is printed.
var errExpectation = errors.New("the decision is not the expected one")

// policyCmd is `browsergate policy test`: one request, decided by a policy
// directory, printed with its reasons. The request comes from a JSON file
// (the form policy-tests.json uses) or from flags, which build the same
// JSON; with --manifest, url_domain and its domain sets are computed from
// the URL by that manifest's scope, as the daemon does.
func policyCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "test" {
		return fmt.Errorf("%w: policy needs a subcommand: test", errUsage)
	}
	fs := flag.NewFlagSet("policy test", flag.ContinueOnError)
	policies := fs.String("policies", "", "directory of Cedar policies (with its schema)")
	requestFile := fs.String("request", "", "JSON request, as in policy-tests.json (- for stdin)")
	manifest := fs.String("manifest", "", "compute url_domain and its domain sets from --url with this manifest's scope")
	command := fs.String("command", "", "command, e.g. submit_form")
	url := fs.String("url", "", "the URL the call is about")
	domain := fs.String("domain", "", "url_domain (default: from --url with --manifest)")
	riskTier := fs.String("risk-tier", "", "risk_tier (default low)")
	approved := fs.Bool("approved", false, "human_approved")
	authenticated := fs.Bool("authenticated", false, "page_state.is_authenticated")
	hasForms := fs.Bool("has-forms", false, "page_state.has_forms")
	principal := fs.String("principal", "", "principal id")
	expect := fs.String("expect", "", "allow or deny: exit 1 when the decision differs")
	var sets, counters, argv multiFlag
	fs.Var(&sets, "set", "a domain set url_domain belongs to (repeatable)")
	fs.Var(&counters, "counter", "name=N, e.g. session_submit_count=5 (repeatable)")
	fs.Var(&argv, "arg", "name=value, an argument of the call (repeatable; integers and true/false are typed)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *policies == "" {
		return fmt.Errorf("%w: policy test needs --policies", errUsage)
	}
	if *expect != "" && *expect != "allow" && *expect != "deny" {
		return fmt.Errorf("%w: --expect must be allow or deny", errUsage)
	}
	engine, err := cedar.LoadDir(*policies)
	if err != nil {
		return err
	}

	var data []byte
	switch {
	case *requestFile == "-":
		data, err = io.ReadAll(os.Stdin)
	case *requestFile != "":
		data, err = os.ReadFile(*requestFile)
	default:
		if *command == "" {
			return fmt.Errorf("%w: policy test needs --request FILE or at least --command", errUsage)
		}
		req := map[string]any{"command": *command, "human_approved": *approved,
			"page_state": map[string]any{"is_authenticated": *authenticated, "has_forms": *hasForms, "url": *url}}
		for k, v := range map[string]string{"url": *url, "url_domain": *domain, "risk_tier": *riskTier, "principal": *principal} {
			if v != "" {
				req[k] = v
			}
		}
		if *manifest != "" && *url != "" {
			host, parents, err := domainOf(*manifest, *url)
			if err != nil {
				return err
			}
			if *domain == "" {
				req["url_domain"] = host
			}
			sets = append(parents, sets...)
		}
		if len(sets) > 0 {
			req["domain_sets"] = []string(sets)
		}
		if len(counters) > 0 {
			cs := map[string]int{}
			for _, c := range counters {
				name, n, ok := strings.Cut(c, "=")
				v, err := strconv.Atoi(n)
				if !ok || err != nil {
					return fmt.Errorf("%w: --counter %q: want name=N", errUsage, c)
				}
				cs[name] = v
			}
			req["counters"] = cs
		}
		if len(argv) > 0 {
			as := map[string]any{}
			for _, a := range argv {
				name, v, ok := strings.Cut(a, "=")
				if !ok {
					return fmt.Errorf("%w: --arg %q: want name=value", errUsage, a)
				}
				as[name] = typedValue(v)
			}
			req["args"] = as
		}
		data, err = json.Marshal(req)
	}
	if err != nil {
		return err
	}
	r, err := cedar.ParseRequestJSON(data)
	if err != nil {
		return err
	}
	if err := engine.ValidateRequest(r); err != nil {
		return err
	}
	d := engine.Decide(r)
	printDecision(stdout, r, d, engine)
	if got := map[bool]string{true: "allow", false: "deny"}[d.Allowed]; *expect != "" && got != *expect {
		return fmt.Errorf("%w: expected %s, got %s", errExpectation, *expect, got)
	}
	return nil
}

// domainOf reads a manifest and returns the canonical host of url and the
// domain sets its scope puts it in.
func domainOf(manifestPath, url string) (string, []string, error) {
	ms, err := toolclad.LoadFiles([]string{manifestPath})
	if err != nil {
		return "", nil, err
	}
	scopes, err := executor.Scopes(ms)
	if err != nil {
		return "", nil, err
	}
	sc := scopes[ms[0]]
	host := sc.Check(url).Host
	return host, sc.DomainSets(host), nil
}

// typedValue reads a flag value as JSON would type it: integers, booleans,
// else a string.
func typedValue(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
		return b
	}
	return v
}

func printDecision(w io.Writer, r *cedar.Request, d cedar.Decision, engine *cedar.Engine) {
	verdict := "DENY"
	switch {
	case d.Allowed:
		verdict = "ALLOW"
	case d.NeedsApproval:
		verdict = "DENY (a human's approval would allow it: the daemon holds such a call for approval)"
	}
	fmt.Fprintf(w, "request:  %s %s on %q (url_domain %q in %v), risk_tier %s, human_approved %v\n",
		r.Principal, r.Command, r.URL, r.URLDomain, r.DomainSets, r.RiskTier, r.HumanApproved)
	fmt.Fprintf(w, "decision: %s\n", verdict)
	where := map[string]string{}
	for _, p := range engine.Policies() {
		where[p.ID] = p.Location()
	}
	for _, id := range d.PolicyIDs {
		fmt.Fprintf(w, "policy:   %s (%s)\n", id, where[id])
	}
	for _, reason := range d.Reasons {
		fmt.Fprintf(w, "reason:   %s\n", reason)
	}
	for _, e := range d.Errors {
		fmt.Fprintf(w, "error:    %s\n", e)
	}
}

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

var policyTestCommand = &command{
	name: "policy test",
	synopsis: `--policies DIR (--request FILE | --command C [--url U] [--manifest FILE] [--domain D] [--set S...]
		[--authenticated] [--has-forms] [--risk-tier T] [--approved] [--principal ID] [--counter NAME=N...] [--arg NAME=VALUE...])
		[--expect allow|deny]`,
	summary: "Decide one request with a policy directory and print the decision, the policies that made it and why.\n" +
		"The request comes from a JSON file (the form policy-tests.json uses) or from flags, which build the same JSON;\n" +
		"with --manifest, url_domain and its domain sets are computed from --url by that manifest's scope, as the daemon does.",
	setup: policyTestFlags,
}

// policyTestFlags declares the flags of `browsergate policy test`.
func policyTestFlags(fs *flag.FlagSet) action {
	q := &policyTestRequest{}
	fs.StringVar(&q.policies, "policies", "", "Cedar policy `DIR` (with its schema)")
	fs.StringVar(&q.requestFile, "request", "", "JSON request `FILE`, as in policy-tests.json (- for stdin)")
	fs.StringVar(&q.manifest, "manifest", "", "compute url_domain and its domain sets from --url with the scope of this manifest `FILE`")
	fs.StringVar(&q.command, "command", "", "the call's command `C`, e.g. submit_form")
	fs.StringVar(&q.url, "url", "", "the `URL` the call is about")
	fs.StringVar(&q.domain, "domain", "", "url_domain `D` (default: from --url with --manifest)")
	fs.StringVar(&q.riskTier, "risk-tier", "", "risk_tier `T` (default low)")
	fs.BoolVar(&q.approved, "approved", false, "human_approved")
	fs.BoolVar(&q.authenticated, "authenticated", false, "page_state.is_authenticated")
	fs.BoolVar(&q.hasForms, "has-forms", false, "page_state.has_forms")
	fs.StringVar(&q.principal, "principal", "", "principal `ID`")
	fs.StringVar(&q.expect, "expect", "", "the expected decision, `allow|deny`: exit 1 when it differs")
	fs.Var(&q.sets, "set", "a domain set `S` url_domain belongs to (repeatable)")
	fs.Var(&q.counters, "counter", "a counter of the session, as `NAME=N`, e.g. session_submit_count=5 (repeatable)")
	fs.Var(&q.args, "arg", "an argument of the call, as `NAME=VALUE` (repeatable; integers and true/false are typed)")
	return func(_ []string, stdout, _ io.Writer) error { return policyTest(q, stdout) }
}

// policyTestRequest is a parsed `policy test` command line.
type policyTestRequest struct {
	policies, requestFile, manifest, command, url, domain, riskTier, principal, expect string
	approved, authenticated, hasForms                                                  bool
	sets, counters, args                                                               multiFlag
}

// policyTest decides one request and prints the decision with its reasons.
func policyTest(q *policyTestRequest, stdout io.Writer) error {
	if q.policies == "" {
		return fmt.Errorf("%w: policy test needs --policies", errUsage)
	}
	if q.expect != "" && q.expect != "allow" && q.expect != "deny" {
		return fmt.Errorf("%w: --expect must be allow or deny", errUsage)
	}
	engine, err := executor.LoadPolicies(q.policies, nil)
	if err != nil {
		return err
	}

	var data []byte
	switch {
	case q.requestFile == "-":
		data, err = io.ReadAll(os.Stdin)
	case q.requestFile != "":
		data, err = os.ReadFile(q.requestFile)
	default:
		if q.command == "" {
			return fmt.Errorf("%w: policy test needs --request FILE or at least --command", errUsage)
		}
		req := map[string]any{"command": q.command, "human_approved": q.approved,
			"page_state": map[string]any{"is_authenticated": q.authenticated, "has_forms": q.hasForms, "url": q.url}}
		for k, v := range map[string]string{"url": q.url, "url_domain": q.domain, "risk_tier": q.riskTier, "principal": q.principal} {
			if v != "" {
				req[k] = v
			}
		}
		if q.manifest != "" && q.url != "" {
			host, parents, err := domainOf(q.manifest, q.url)
			if err != nil {
				return err
			}
			if q.domain == "" {
				req["url_domain"] = host
			}
			q.sets = append(parents, q.sets...)
		}
		if len(q.sets) > 0 {
			req["domain_sets"] = []string(q.sets)
		}
		if len(q.counters) > 0 {
			cs := map[string]int{}
			for _, c := range q.counters {
				name, n, ok := strings.Cut(c, "=")
				v, err := strconv.Atoi(n)
				if !ok || err != nil {
					return fmt.Errorf("%w: --counter %q: want name=N", errUsage, c)
				}
				cs[name] = v
			}
			req["counters"] = cs
		}
		if len(q.args) > 0 {
			as := map[string]any{}
			for _, a := range q.args {
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
	if got := map[bool]string{true: "allow", false: "deny"}[d.Allowed]; q.expect != "" && got != q.expect {
		return fmt.Errorf("%w: expected %s, got %s", errExpectation, q.expect, got)
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
	sc := ms[0].Scope()
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

package cedar_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
)

// BenchmarkDecide measures one gate decision against the shipped policies
// (DESIGN.md: a whole gate decision well under 100µs).
func BenchmarkDecide(b *testing.B) {
	e := loadShipped(b)
	for _, cmd := range []string{"navigate", "submit_form", "click"} {
		b.Run(cmd, func(b *testing.B) {
			r := baseRequest(cmd)
			r.Args = map[string]any{"url": "https://docs.example.com/a", "selector": "#login"}
			b.ReportAllocs()
			for b.Loop() {
				if d := e.Decide(r); len(d.Reasons) == 0 {
					b.Fatal("no reason")
				}
			}
		})
	}
}

// BenchmarkDecideLatency measures the latency distribution of Decide over
// policy sets of 10, 100 and 1,000 generated policies that validate
// against the shipped schema, with a varied stream of requests, and reports
// the median and 99th percentile per decision. Run it with a fixed count
// so every size sees the same requests:
//
//	go test ./cedar -run '^$' -bench DecideLatency -benchtime 2000x
func BenchmarkDecideLatency(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			e := loadFiles(b, map[string]string{"generated.cedar": generatePolicies(n)})
			if got := len(e.Policies()); got != n {
				b.Fatalf("loaded %d policies, want %d", got, n)
			}
			reqs := benchRequests(64)
			allowed := 0
			for _, r := range reqs {
				d := e.Decide(r)
				if len(d.Errors) > 0 {
					b.Fatalf("evaluation errors: %q", d.Errors)
				}
				if d.Allowed {
					allowed++
				}
			}
			if allowed == 0 || allowed == len(reqs) {
				b.Fatalf("%d of %d requests allowed: the mix should both allow and deny", allowed, len(reqs))
			}
			var durs []time.Duration
			i := 0
			for b.Loop() {
				r := reqs[i%len(reqs)]
				i++
				start := time.Now()
				d := e.Decide(r)
				durs = append(durs, time.Since(start))
				if len(d.Reasons) == 0 {
					b.Fatal("no reason")
				}
			}
			slices.Sort(durs)
			b.ReportMetric(float64(percentile(durs, 50).Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(percentile(durs, 99).Nanoseconds()), "p99-ns")
		})
	}
}

// percentile returns the p-th percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(i, 0)]
}

// generatePolicies writes n policies of the kinds operators write: domain
// permits for navigation, approval forbids on logged-in pages, per-command
// rate limits over the session counters, blocked domain sets, page-state
// permits, argument checks, per-tool permits and URL patterns.
func generatePolicies(n int) string {
	const head = `permit (principal, action == Web::Action::"browse", resource)`
	const fhead = `forbid (principal, action == Web::Action::"browse", resource)`
	var sb strings.Builder
	for i := range n {
		cmd := commands[i%len(commands)]
		fmt.Fprintf(&sb, "@id(\"gen-%d\")\n", i)
		switch i % 8 {
		case 0:
			fmt.Fprintf(&sb, "%s\nwhen { resource.command == \"navigate\" && resource.url_domain in Web::DomainSet::\"set-%d\" };\n", head, i%20)
		case 1:
			fmt.Fprintf(&sb, "%s\nwhen { resource.command == %q && resource.page_state.is_authenticated }\nunless { resource.human_approved };\n", fhead, cmd)
		case 2:
			fmt.Fprintf(&sb, "%s\nwhen { resource.command == %q && resource.session_%s_count >= %d };\n", fhead, cmd, cmd, 20+i%30)
		case 3:
			fmt.Fprintf(&sb, "%s\nwhen { resource.url_domain in Web::DomainSet::\"blocked-%d\" && resource.command != \"snapshot\" };\n", fhead, i%10)
		case 4:
			fmt.Fprintf(&sb, "%s\nwhen { resource.command == %q && resource.page_state.page_loaded && resource.page_state.tab_count <= %d };\n", head, cmd, 1+i%5)
		case 5:
			fmt.Fprintf(&sb, "%s\nwhen { resource.command == \"type_text\" && resource.args has text && resource.args.text like \"*secret-%d*\" };\n", fhead, i)
		case 6:
			fmt.Fprintf(&sb, "%s\nwhen { resource.tool == \"tool-%d\" && resource.risk_tier != \"critical\" && context.time > %d };\n", head, i%4, 1700000000000+i)
		case 7:
			fmt.Fprintf(&sb, "%s\nwhen { resource.url like \"https://*.bad%d.example/*\" || resource.page_state.domain == \"bad%d.example\" };\n", fhead, i, i)
		}
	}
	return sb.String()
}

// benchRequests builds n varied, schema-conforming requests.
func benchRequests(n int) []*cedar.Request {
	reqs := make([]*cedar.Request, n)
	for i := range reqs {
		cmd := commands[i%len(commands)]
		r := baseRequest(cmd)
		r.Tool = fmt.Sprintf("tool-%d", i%5)
		r.URLDomain = fmt.Sprintf("host%d.example", i%7)
		r.URL = "https://" + r.URLDomain + "/page"
		r.DomainSets = []string{fmt.Sprintf("set-%d", i%25), fmt.Sprintf("blocked-%d", i%13)}
		r.PageState["is_authenticated"] = i%3 == 0
		r.PageState["tab_count"] = 1 + i%4
		r.PageState["domain"] = r.URLDomain
		r.Counters["session_"+cmd+"_count"] = i % 40
		r.RiskTier = []string{"low", "medium", "high", "critical"}[i%4]
		switch cmd {
		case "navigate":
			r.Args = map[string]any{"url": r.URL}
		case "type_text":
			r.Args = map[string]any{"ref": "e1", "text": fmt.Sprintf("secret-%d", i)}
		case "click":
			r.Args = map[string]any{"ref": "e2"}
		}
		reqs[i] = r
	}
	return reqs
}

// TestBenchInputsConform keeps the benchmark honest: its policies validate
// (LoadDir) and its requests conform to the shipped schema.
func TestBenchInputsConform(t *testing.T) {
	t.Parallel()
	e := loadFiles(t, map[string]string{"generated.cedar": generatePolicies(64)})
	for i, r := range benchRequests(64) {
		if err := e.ValidateRequest(r); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
}

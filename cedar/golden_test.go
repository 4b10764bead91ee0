package cedar_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestShippedGolden records, for review in diffs, the shipped policy list
// and the full decision (ids, reasons, errors) for representative calls.
// Regenerate with: go test ./cedar/ -run TestShippedGolden -update
func TestShippedGolden(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	var b bytes.Buffer
	for _, p := range e.Policies() {
		fmt.Fprintf(&b, "policy %s %s %s\n", p.ID, p.Effect, p.Location())
	}
	cases := []struct {
		name string
		r    *cedar.Request
	}{
		{"navigate allowed", baseRequest("navigate")},
		{"navigate unlisted", func() *cedar.Request { r := baseRequest("navigate"); r.DomainSets = nil; return r }()},
		{"submit authenticated", func() *cedar.Request {
			r := baseRequest("submit_form")
			r.PageState["is_authenticated"] = true
			return r
		}()},
		{"submit fifth", func() *cedar.Request {
			r := baseRequest("submit_form")
			r.Counters["session_submit_count"] = 5
			return r
		}()},
		{"submit missing counter", func() *cedar.Request { r := baseRequest("submit_form"); r.Counters = nil; return r }()},
		{"execute_js", baseRequest("execute_js")},
		{"load_storage_state", func() *cedar.Request { r := baseRequest("load_storage_state"); r.RiskTier = "high"; return r }()},
		{"load_storage_state approved", func() *cedar.Request {
			r := baseRequest("load_storage_state")
			r.RiskTier, r.HumanApproved = "high", true
			return r
		}()},
		{"click", baseRequest("click")},
		{"critical click", func() *cedar.Request { r := baseRequest("click"); r.RiskTier = "critical"; return r }()},
		{"critical click approved", func() *cedar.Request {
			r := baseRequest("click")
			r.RiskTier, r.HumanApproved = "critical", true
			return r
		}()},
	}
	for _, c := range cases {
		d := e.Decide(c.r)
		fmt.Fprintf(&b, "\n== %s\nallowed: %v\nneeds_approval: %v\npolicy_ids: %s\n", c.name, d.Allowed, d.NeedsApproval, strings.Join(d.PolicyIDs, ", "))
		for _, s := range d.Reasons {
			fmt.Fprintf(&b, "reason: %s\n", s)
		}
		for _, s := range d.Errors {
			fmt.Fprintf(&b, "error: %s\n", s)
		}
	}
	golden := filepath.Join("testdata", "shipped.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("decisions differ from %s (run with -update if intended)\n got:\n%s\nwant:\n%s", golden, b.Bytes(), want)
	}
}

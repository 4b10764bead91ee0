package cedar_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// TestShippedPolicies proves each documented policy allows and denies
// exactly as DESIGN.md writes it, plus the baseline permit.
func TestShippedPolicies(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	tests := []struct {
		name    string
		command string
		edit    func(r *cedar.Request)
		allowed bool
		ids     []string
	}{
		{"navigate to allowed domain", "navigate", func(r *cedar.Request) {
			r.Args = map[string]any{"url": "https://docs.example.com/a"}
		}, true, []string{"navigate-allowed-domains"}},
		{"navigate to domain in no set", "navigate", func(r *cedar.Request) {
			r.URL, r.URLDomain, r.DomainSets = "https://other.test/", "other.test", nil
		}, false, nil},
		{"navigate to blocked domain", "navigate", func(r *cedar.Request) {
			r.URL, r.URLDomain, r.DomainSets = "https://x.evil.com/", "x.evil.com", []string{"blocked"}
		}, false, nil},
		{"navigate with no url", "navigate", func(r *cedar.Request) {
			r.URL, r.URLDomain, r.DomainSets = "", "", nil
		}, false, nil},
		{"submit on authenticated page without approval", "submit_form", func(r *cedar.Request) {
			r.PageState["is_authenticated"] = true
		}, false, []string{"submit-authenticated-needs-approval"}},
		{"submit on authenticated page with approval", "submit_form", func(r *cedar.Request) {
			r.PageState["is_authenticated"] = true
			r.HumanApproved = true
		}, true, []string{"permit-non-navigation"}},
		{"submit on anonymous page", "submit_form", nil, true, []string{"permit-non-navigation"}},
		{"execute_js without approval", "execute_js", nil, false, []string{"execute-js-needs-approval"}},
		{"execute_js with approval", "execute_js", func(r *cedar.Request) {
			r.HumanApproved = true
		}, true, []string{"permit-non-navigation"}},
		{"fourth submit count allowed", "submit_form", func(r *cedar.Request) {
			r.Counters["session_submit_count"] = 4
		}, true, []string{"permit-non-navigation"}},
		{"fifth submit count denied", "submit_form", func(r *cedar.Request) {
			r.Counters["session_submit_count"] = 5
		}, false, []string{"submit-rate-limit"}},
		{"rate limit holds even when approved", "submit_form", func(r *cedar.Request) {
			r.Counters["session_submit_count"] = 9
			r.HumanApproved = true
		}, false, []string{"submit-rate-limit"}},
		{"both submit forbids fire", "submit_form", func(r *cedar.Request) {
			r.Counters["session_submit_count"] = 5
			r.PageState["is_authenticated"] = true
		}, false, []string{"submit-authenticated-needs-approval", "submit-rate-limit"}},
		{"baseline permits click", "click", nil, true, []string{"permit-non-navigation"}},
		{"baseline permits snapshot on blocked page", "snapshot", func(r *cedar.Request) {
			r.URLDomain, r.DomainSets = "x.evil.com", []string{"blocked"}
		}, true, []string{"permit-non-navigation"}},
		{"other action is denied", "click", func(r *cedar.Request) {
			r.Action = "admin"
		}, false, nil},
		{"critical command without approval", "click", func(r *cedar.Request) {
			r.RiskTier = "critical"
		}, false, []string{"critical-needs-approval"}},
		{"critical command with approval", "click", func(r *cedar.Request) {
			r.RiskTier, r.HumanApproved = "critical", true
		}, true, []string{"permit-non-navigation"}},
		{"high command needs no approval", "click", func(r *cedar.Request) {
			r.RiskTier = "high"
		}, true, []string{"permit-non-navigation"}},
		{"critical navigate to allowed domain", "navigate", func(r *cedar.Request) {
			r.RiskTier = "critical"
		}, false, []string{"critical-needs-approval"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRequest(tc.command)
			if tc.edit != nil {
				tc.edit(r)
			}
			d := e.Decide(r)
			if d.Allowed != tc.allowed {
				t.Fatalf("Allowed = %v, want %v; reasons %q errors %q", d.Allowed, tc.allowed, d.Reasons, d.Errors)
			}
			if len(d.Errors) != 0 {
				t.Errorf("Errors = %q, want none", d.Errors)
			}
			if !slices.Equal(d.PolicyIDs, tc.ids) {
				t.Errorf("PolicyIDs = %q, want %q", d.PolicyIDs, tc.ids)
			}
			for _, id := range tc.ids {
				if !strings.Contains(strings.Join(d.Reasons, "\n"), `"`+id+`"`) {
					t.Errorf("Reasons %q do not name %q", d.Reasons, id)
				}
			}
			if len(d.Reasons) == 0 {
				t.Error("no reason given")
			}
		})
	}
}

// TestShippedPolicyList checks the shipped directory holds exactly the
// documented ids, with their effects.
func TestShippedPolicyList(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for _, p := range loadShipped(t).Policies() {
		got[p.ID] = p.Effect
		if p.Line < 1 || !strings.HasSuffix(p.File, ".cedar") {
			t.Errorf("policy %q has bad position %s", p.ID, p.Location())
		}
	}
	want := map[string]string{
		"navigate-allowed-domains":            "permit",
		"navigate-approved-outside-scope":     "permit",
		"submit-authenticated-needs-approval": "forbid",
		"execute-js-needs-approval":           "forbid",
		"submit-rate-limit":                   "forbid",
		"upload-needs-approval":               "forbid",
		"state-load-needs-approval":           "forbid",
		"permit-non-navigation":               "permit",
		"critical-needs-approval":             "forbid",
	}
	if len(got) != len(want) {
		t.Errorf("policies = %v, want %v", got, want)
	}
	for id, eff := range want {
		if got[id] != eff {
			t.Errorf("policy %q effect = %q, want %q", id, got[id], eff)
		}
	}
}

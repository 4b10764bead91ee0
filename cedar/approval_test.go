package cedar_test

import (
	"slices"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// TestNeedsApproval proves Decision.NeedsApproval is set exactly when a
// human approval would turn the denial into an allow.
func TestNeedsApproval(t *testing.T) {
	t.Parallel()
	shipped := loadShipped(t)
	// failing has a liftable forbid whose evaluation fails besides: an
	// approval would not make that request pass.
	failing := loadFiles(t, map[string]string{
		"a.cedar": `@id("allow-all") permit (principal, action, resource);
@id("liftable") forbid (principal, action, resource) unless { resource.human_approved == true };
@id("broken") forbid (principal, action, resource) when { resource.interaction_count + 9223372036854775807 > 0 };`,
	})
	tests := []struct {
		name    string
		e       *cedar.Engine
		command string
		edit    func(*cedar.Request)
		allowed bool
		needs   bool
		ids     []string
	}{
		{"submit on authenticated page", shipped, "submit_form", func(r *cedar.Request) {
			r.PageState["is_authenticated"] = true
		}, false, true, []string{"submit-authenticated-needs-approval"}},
		{"execute_js", shipped, "execute_js", nil, false, true, []string{"execute-js-needs-approval"}},
		{"critical risk tier", shipped, "click", func(r *cedar.Request) {
			r.RiskTier = "critical"
		}, false, true, []string{"critical-needs-approval"}},
		{"critical and authenticated submit: both lifted", shipped, "submit_form", func(r *cedar.Request) {
			r.RiskTier = "critical"
			r.PageState["is_authenticated"] = true
		}, false, true, []string{"critical-needs-approval", "submit-authenticated-needs-approval"}},
		{"rate limit is not lifted", shipped, "submit_form", func(r *cedar.Request) {
			r.Counters["session_submit_count"] = 5
		}, false, false, []string{"submit-rate-limit"}},
		{"rate limit with a liftable forbid", shipped, "submit_form", func(r *cedar.Request) {
			r.Counters["session_submit_count"] = 5
			r.PageState["is_authenticated"] = true
		}, false, false, []string{"submit-authenticated-needs-approval", "submit-rate-limit"}},
		{"default deny", shipped, "navigate", func(r *cedar.Request) {
			r.URLDomain, r.DomainSets = "other.test", nil
		}, false, false, nil},
		{"default deny of a critical navigate", shipped, "navigate", func(r *cedar.Request) {
			r.URLDomain, r.DomainSets, r.RiskTier = "other.test", nil, "critical"
		}, false, false, []string{"critical-needs-approval"}},
		{"evaluation error", failing, "click", nil, false, false, []string{"liftable", "broken"}},
		{"already approved", shipped, "submit_form", func(r *cedar.Request) {
			r.PageState["is_authenticated"] = true
			r.HumanApproved = true
			r.Counters["session_submit_count"] = 7
		}, false, false, []string{"submit-rate-limit"}},
		{"allowed", shipped, "click", nil, true, false, []string{"permit-non-navigation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRequest(tc.command)
			if tc.edit != nil {
				tc.edit(r)
			}
			d := tc.e.Decide(r)
			if d.Allowed != tc.allowed || d.NeedsApproval != tc.needs {
				t.Errorf("Allowed, NeedsApproval = %v, %v, want %v, %v (%+v)", d.Allowed, d.NeedsApproval, tc.allowed, tc.needs, d)
			}
			if !slices.Equal(d.PolicyIDs, tc.ids) {
				t.Errorf("PolicyIDs = %q, want %q", d.PolicyIDs, tc.ids)
			}
		})
	}
}

// TestNeedsApprovalIsHonest checks the hint against its definition: for
// each request the hint claims, approving it must allow it.
func TestNeedsApprovalIsHonest(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	for _, cmd := range commands {
		for _, authed := range []bool{false, true} {
			for _, tier := range []string{"low", "high", "critical"} {
				r := baseRequest(cmd)
				r.PageState["is_authenticated"] = authed
				r.RiskTier = tier
				d := e.Decide(r)
				r.HumanApproved = true
				approved := e.Decide(r)
				if d.NeedsApproval != (!d.Allowed && approved.Allowed) {
					t.Errorf("%s authed=%v tier=%s: NeedsApproval = %v, but allowed %v and allowed when approved %v",
						cmd, authed, tier, d.NeedsApproval, d.Allowed, approved.Allowed)
				}
			}
		}
	}
}

package cedar_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// TestCommandIndexChangesNothing: deciding on the policies a request's
// command can match, and asking whether an approval could lift a denial
// only when it could, gives exactly the decision of the whole set: the
// same outcome, policies, reasons, errors and NeedsApproval, for generated
// sets and for policies whose command test is not their first conjunct
// (they may fail on other commands, and must still be evaluated).
func TestCommandIndexChangesNothing(t *testing.T) {
	t.Parallel()
	extra := `
@id("late-command-test")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.interaction_count * 9223372036854775807 > 0 && resource.command == "type_text" };
@id("reversed")
permit (principal, action == Web::Action::"browse", resource)
when { "snapshot" == resource.command };
@id("not-navigate-approved")
permit (principal, action == Web::Action::"browse", resource)
when { resource.command != "navigate" && resource.human_approved };
@id("or-and-parens")
forbid (principal, action == Web::Action::"browse", resource)
when { (resource.command == "hover" || resource.command == "scroll") && resource.page_state.tab_count > 2 };
@id("like-command")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command like "go_*" && resource.page_state.has_forms };
@id("has-approval")
permit (principal, action == Web::Action::"browse", resource)
when { resource.command == "download" && resource has human_approved && resource["human_approved"] };
@id("unless-first")
forbid (principal, action == Web::Action::"browse", resource)
unless { resource.command == "click" } when { resource.page_state.tab_count > 3 };
`
	var e *cedar.Engine
	for _, n := range []int{10, 100, 1000} {
		e = loadFiles(t, map[string]string{"generated.cedar": generatePolicies(n), "extra.cedar": extra})
		reqs := benchRequests(96)
		for i, r := range reqs {
			for _, approved := range []bool{false, true} {
				r.HumanApproved = approved
				r.InteractionCount = i % 3 // 2 makes late-command-test overflow, on every command
				got, want := e.Decide(r), e.DecideUnindexed(r)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%d policies, request %d (%s, approved %v):\nindexed   %+v\nunindexed %+v", n, i, r.Command, approved, got, want)
				}
			}
		}
	}
	e = loadShipped(t)
	for _, cmd := range commands {
		for _, auth := range []bool{false, true} {
			r := baseRequest(cmd)
			r.PageState["is_authenticated"] = auth
			r.RiskTier = []string{"low", "critical"}[len(cmd)%2]
			r.Counters["session_submit_count"] = 5 * len(cmd) % 7
			if got, want := e.Decide(r), e.DecideUnindexed(r); !reflect.DeepEqual(got, want) {
				t.Errorf("shipped policies, %s: %s", cmd, fmt.Sprintf("indexed %+v, unindexed %+v", got, want))
			}
		}
	}
}

// TestResourceCannotBeThePrincipal: a request whose resource names the
// same entity as its principal (a manifest's [tool.cedar] resource type
// set to Web::Agent, a session id equal to the agent's) is refused with
// an error rather than decided on an entity without the call's attributes.
func TestResourceCannotBeThePrincipal(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	r := baseRequest("click")
	r.ResourceType, r.Session = "Web::Agent", r.Principal
	if d := e.Decide(r); d.Allowed || len(d.Errors) == 0 {
		t.Errorf("decision %+v: want a denial with an error", d)
	}
}

package cedar_test

import (
	"fmt"

	"github.com/browsergate/browsergate/cedar"
)

// Example loads the shipped policies and decides one submit_form call on a
// logged-in page that no human has approved: denied, by a policy that a
// human's approval lifts.
func Example() {
	engine, err := cedar.LoadDir("../policies")
	if err != nil {
		fmt.Println(err)
		return
	}
	d := engine.Decide(&cedar.Request{
		Principal:  "agent-1",
		Action:     "browse",
		Session:    "s1",
		Command:    "submit_form",
		URLDomain:  "shop.example.com",
		DomainSets: []string{"allowed"},
		PageState:  map[string]any{"is_authenticated": true},
		Counters:   map[string]int{"session_submit_count": 0},
	})
	fmt.Println(d.Allowed, d.PolicyIDs)
	fmt.Println(d.Reasons[0])
	fmt.Println("an approval would lift it:", d.NeedsApproval)
	// Output:
	// false [submit-authenticated-needs-approval]
	// forbidden by policy "submit-authenticated-needs-approval" (../policies/submit.cedar:4)
	// an approval would lift it: true
}

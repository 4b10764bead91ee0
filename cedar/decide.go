package cedar

import (
	"fmt"
	"sort"

	cedargo "github.com/cedar-policy/cedar-go"
)

// Decision is the outcome of one Decide call: a value, never an error, so a
// denial travels to the agent as a normal refusal and into the evidence log
// with the policies and reasons that produced it.
type Decision struct {
	// Allowed is true only when a permit matched, no forbid matched and no
	// policy failed to evaluate.
	Allowed bool
	// PolicyIDs are the determining policies: the permits that matched when
	// allowed; when denied, the forbids that matched and the policies whose
	// evaluation failed. Empty for a default deny.
	PolicyIDs []string
	// Reasons are sentences for the agent, the operator and the evidence log,
	// each naming its policy and where it is written.
	Reasons []string
	// Errors are evaluation (or request) errors. Any error means denial,
	// even when a permit matched: the gate fails closed.
	Errors []string
	// NeedsApproval is true when the call was denied only by policies a
	// human approval lifts: it was denied without errors, HumanApproved was
	// false, and the same request with HumanApproved true is allowed. A
	// policy makes itself liftable with
	// `unless { resource.human_approved == true }`; a default deny, a
	// forbid without that clause (a rate limit) or an evaluation error
	// leaves it false, so asking a human would be pointless.
	NeedsApproval bool
}

// Decide evaluates r against the policy set. It never panics: an invalid
// request or an internal failure is a denial with a reason. Any policy that
// fails to evaluate denies the request, although cedar-go would skip it.
func (e *Engine) Decide(r *Request) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("internal error: %v", p)
			d = Decision{Reasons: []string{msg + "; denied (fail closed)"}, Errors: []string{msg}}
		}
	}()
	if e == nil || e.set == nil {
		return failClosed("no policy engine loaded")
	}
	if r == nil {
		return failClosed("no request")
	}
	ts := r.when()
	req, entities, err := r.toCedar(ts)
	if err != nil {
		return failClosed(err.Error())
	}
	set := e.setFor(r.Command)
	dec, diag := cedargo.Authorize(set, entities, req)
	d = e.explain(r.Command, dec, diag)
	if !d.Allowed && len(d.Errors) == 0 && !r.HumanApproved && e.approvalCouldLift(set, diag) {
		d.NeedsApproval = allowedIfApproved(set, req, entities)
	}
	return d
}

// allowedIfApproved decides r again on set as if a human had approved it,
// at the same time, and reports whether that would be allowed (a permit
// matched, no forbid matched, no policy failed). Only the resource's
// human_approved differs from the request as decided (req, entities).
func allowedIfApproved(set *cedargo.PolicySet, req cedargo.Request, entities cedargo.EntityMap) bool {
	res, ok := entities[req.Resource]
	if !ok {
		return false
	}
	attrs := make(cedargo.RecordMap, res.Attributes.Len())
	for k, v := range res.Attributes.All() {
		attrs[k] = v
	}
	attrs["human_approved"] = cedargo.True
	approved := make(cedargo.EntityMap, len(entities))
	for uid, ent := range entities {
		approved[uid] = ent
	}
	res.Attributes = cedargo.NewRecord(attrs)
	approved[req.Resource] = res
	dec, diag := cedargo.Authorize(set, approved, req)
	return dec == cedargo.Allow && len(diag.Errors) == 0
}

func failClosed(msg string) Decision {
	return Decision{Reasons: []string{msg + "; denied (fail closed)"}, Errors: []string{msg}}
}

// explain turns cedar-go's decision and diagnostic into a Decision, in load
// order so that the same request always reads the same way.
func (e *Engine) explain(command string, dec cedargo.Decision, diag cedargo.Diagnostic) Decision {
	reasons := append([]cedargo.DiagnosticReason(nil), diag.Reasons...)
	sort.Slice(reasons, func(i, j int) bool { return e.order(reasons[i].PolicyID) < e.order(reasons[j].PolicyID) })
	errs := append([]cedargo.DiagnosticError(nil), diag.Errors...)
	sort.Slice(errs, func(i, j int) bool { return e.order(errs[i].PolicyID) < e.order(errs[j].PolicyID) })

	var d Decision
	d.Allowed = dec == cedargo.Allow && len(errs) == 0
	verb := "forbidden"
	if dec == cedargo.Allow {
		verb = "permitted"
	}
	// When an error overturns an allow, the permits are not the reason for
	// the outcome: only the failures are.
	if d.Allowed || dec == cedargo.Deny {
		for _, r := range reasons {
			d.PolicyIDs = append(d.PolicyIDs, string(r.PolicyID))
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s by policy %q (%s)", verb, r.PolicyID, e.location(r.PolicyID)))
		}
	}
	for _, de := range errs {
		d.PolicyIDs = append(d.PolicyIDs, string(de.PolicyID))
		d.Reasons = append(d.Reasons, fmt.Sprintf("policy %q failed: %s; denied (fail closed)", de.PolicyID, de.Message))
		d.Errors = append(d.Errors, fmt.Sprintf("policy %q (%s): %s", de.PolicyID, e.location(de.PolicyID), de.Message))
	}
	if len(d.Reasons) == 0 {
		d.Reasons = []string{fmt.Sprintf("no policy permits command %q (default deny)", command)}
	}
	return d
}

func (e *Engine) order(id cedargo.PolicyID) int {
	if i, ok := e.index[id]; ok {
		return i
	}
	return len(e.infos)
}

func (e *Engine) location(id cedargo.PolicyID) string {
	if i, ok := e.index[id]; ok {
		return e.infos[i].Location()
	}
	return "unknown"
}

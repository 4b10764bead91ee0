package cedar

import cedargo "github.com/cedar-policy/cedar-go"

// DecideUnindexed is Decide on the whole policy set, with the approval
// question always asked: what Decide must agree with.
func (e *Engine) DecideUnindexed(r *Request) Decision {
	req, entities, err := r.toCedar(r.when())
	if err != nil {
		return failClosed(err.Error())
	}
	dec, diag := cedargo.Authorize(e.set, entities, req)
	d := e.explain(r.Command, dec, diag)
	if !d.Allowed && len(d.Errors) == 0 && !r.HumanApproved {
		// The request built again, approved, as Decide did before it
		// reused the entities.
		approved := *r
		approved.HumanApproved = true
		if areq, aent, err := approved.toCedar(r.when()); err == nil {
			adec, adiag := cedargo.Authorize(e.set, aent, areq)
			d.NeedsApproval = adec == cedargo.Allow && len(adiag.Errors) == 0
		}
	}
	return d
}

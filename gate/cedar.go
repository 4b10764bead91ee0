package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// cedar asks the policies about the call (and, for a click that submits a
// form, about the submission as submit_form) and collects what needs a
// human: denials that only an approval would lift
// (cedar.Decision.NeedsApproval: every determining policy is a forbid ...
// unless { resource.human_approved == true }), and commands the manifest
// marks human_approval. With q.Approved, Cedar sees human_approved = true
// and nothing is left to approve.
func (v *Verdict) cedar(q *Question, submitCmd *toolclad.Command) *DenyError {
	cmd, m := q.Call.Command, q.Call.Manifest
	req := q.CedarRequest(cmd, v.Target)
	v.Requests = []*cedar.Request{req}
	if submitCmd != nil {
		sub := *req
		sub.Command, sub.RiskTier = "submit_form", submitCmd.RiskTier
		v.Requests = append(v.Requests, &sub)
	}
	for i, r := range v.Requests {
		if i == 0 && v.Outside != nil && !q.Approved {
			// Outside allowed_domains, the policies cannot permit the
			// navigate before a human approves it: they are asked about
			// it as approved. A denial then is final, and nobody is
			// asked; an allowance holds it for the human, and the
			// policies decide it again, approved, afterwards.
			approved := *r
			approved.HumanApproved = true
			if d := q.Policies.Decide(&approved); !d.Allowed {
				v.Cedar, v.Approval = "deny", nil
				dn := cedarDenial(d)
				dn.Reason = "navigate to " + v.Outside.URL + " is outside allowed_domains and would wait for a human, but Cedar denies it even if approved: " + dn.Reason
				return dn
			}
			continue
		}
		d := q.Policies.Decide(r)
		switch {
		case d.Allowed:
			for _, id := range d.PolicyIDs {
				if !slices.Contains(v.PolicyIDs, id) {
					v.PolicyIDs = append(v.PolicyIDs, id)
				}
			}
		case d.NeedsApproval && !q.Approved:
			v.Approval = append(v.Approval, fmt.Sprintf("%s is forbidden by policy %s unless a human approves", r.Command, strings.Join(d.PolicyIDs, ", ")))
		default:
			v.Cedar = "deny"
			dn := cedarDenial(d)
			if q.Approved {
				dn.Reason = "approved, but Cedar still denies " + r.Command + ": " + dn.Reason
			} else if i == 1 {
				dn.Reason = "this " + cmd.Name + " would submit a form, judged as submit_form: " + dn.Reason
			}
			return dn
		}
	}
	if !q.Approved {
		if st := q.Facts.StorageState; st != nil && st.Replaces && cmd.Name == "save_storage_state" {
			v.Approval = append(v.Approval, fmt.Sprintf("save_storage_state would replace the saved state %s, which a later load (or the operator's autoload) would sign a session in with", pagetext.Value(st.File.Name)))
		}
		for _, c := range []*toolclad.Command{cmd, submitCmd} {
			if c != nil && (c.HumanApproval || m.Tool.HumanApproval) {
				v.Approval = append(v.Approval, fmt.Sprintf("the manifest marks %s human_approval", c.Name))
			}
		}
	}
	if len(v.Approval) == 0 {
		v.Cedar = "allow"
	}
	return nil
}

// CedarRequest is the Cedar request for a call of cmd about target (its
// url argument, where the action leads, or the page it acts on), with the
// question's principal, session, page state and counters.
func (q *Question) CedarRequest(cmd *toolclad.Command, target string) *cedar.Request {
	m := q.Call.Manifest
	host := q.check(target).Host
	return &cedar.Request{
		Principal:        q.Principal,
		Groups:           q.Groups,
		Action:           m.Tool.Cedar.Action,
		ResourceType:     m.Tool.Cedar.Resource,
		Session:          q.Session,
		Tool:             m.Tool.Name,
		Command:          cmd.Name,
		Args:             q.Call.Args,
		URL:              target,
		URLDomain:        host,
		DomainSets:       q.Scope.DomainSets(host),
		PageState:        q.Facts.State.Map(),
		RiskTier:         q.riskTier(cmd),
		HumanApproved:    q.Approved,
		InteractionCount: q.Limits.Interactions,
		Counters:         q.Limits.Counters(),
		Time:             q.Now,
	}
}

// riskTier is the tier Cedar sees for a call of cmd: the manifest's, but
// critical for a save_storage_state that would replace a saved state (the
// shipped critical-needs-approval then asks a human, and a policy can
// tell such a save apart).
func (q *Question) riskTier(cmd *toolclad.Command) string {
	if f := q.Facts; f != nil && f.StorageState != nil && f.StorageState.Replaces && cmd.Name == "save_storage_state" {
		return "critical"
	}
	return cmd.RiskTier
}

// cedarDenial turns a Cedar denial into a DenyError naming the policies and
// reasons.
func cedarDenial(d cedar.Decision) *DenyError {
	rule := "default deny"
	if len(d.PolicyIDs) > 0 {
		rule = "policy " + strings.Join(d.PolicyIDs, ", ")
	}
	reason := strings.Join(append(append([]string{}, d.Reasons...), d.Errors...), "; ")
	if reason == "" {
		reason = "no policy permits this call"
	}
	return &DenyError{Stage: evidence.StageCedar, Rule: rule, Reason: reason, PolicyIDs: d.PolicyIDs}
}

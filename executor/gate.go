package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/toolclad"
)

// clickTargetJS reports where a click on the element would send the tab:
// the link it is in, or the form it submits.
const clickTargetJS = `function() {
  const a = this.closest && this.closest('a[href], area[href]');
  if (a) return a.href;
  const submit = (this.tagName === 'BUTTON' && (this.type || 'submit') === 'submit') || (this.tagName === 'INPUT' && (this.type === 'submit' || this.type === 'image'));
  if (submit && this.form) return this.formAction || this.form.action || location.href;
  return '';
}`

// gate decides one call: scope first (url arguments, then where a click or
// a submit would lead), then Cedar, then human approval. Any error on the
// way is a denial.
func (e *Executor) gate(ctx context.Context, s *session, t *turn, cmd *toolclad.Command, before PageState) *DenyError {
	sc := e.scopes[s.manifest]
	target := ""
	for _, a := range cmd.Args {
		if a.Type != toolclad.ArgType("url") || !a.ScopeCheck {
			continue
		}
		u, _ := t.args[a.Name].(string)
		if u == "" {
			continue
		}
		v := sc.Check(u)
		if !v.Allowed {
			return &DenyError{Stage: "scope", Rule: v.Rule, Reason: fmt.Sprintf("argument %q: %s", a.Name, v.Reason)}
		}
		t.decision.Scope = v.Rule
		target = u
	}
	if cmd.Name == "click" || cmd.Name == "submit_form" {
		el, named, err := s.target(ctx, t.args)
		if err != nil {
			return &DenyError{Stage: "args", Rule: "element", Reason: err.Error()}
		}
		if !named && cmd.Name == "submit_form" {
			if el, err = s.defaultForm(ctx); err != nil {
				return &DenyError{Stage: "args", Rule: "element", Reason: err.Error()}
			}
			named = true
		}
		if named {
			js := clickTargetJS
			if cmd.Name == "submit_form" {
				js = formTargetJS
			}
			var dest string
			if err := el.call(ctx, js, &dest); err != nil {
				return &DenyError{Stage: "scope", Rule: "element", Reason: "cannot tell where the " + cmd.Name + " leads: " + err.Error()}
			}
			if dest != "" && !strings.HasPrefix(strings.ToLower(dest), "javascript:") {
				v := sc.Check(dest)
				if !v.Allowed {
					return &DenyError{Stage: "scope", Rule: v.Rule,
						Reason: fmt.Sprintf("the %s on %s leads to %s: %s", cmd.Name, el.label, dest, v.Reason)}
				}
				t.decision.Scope = v.Rule
				target = dest
			}
		}
	}

	// Cedar sees the URL the call is about: its url argument or the link or
	// form it follows, else the page it acts on.
	if target == "" {
		target = before.URL
	}
	host := ""
	if v := sc.Check(target); v.Host != "" {
		host = v.Host
	}
	d := e.cfg.Policies.Decide(&cedar.Request{
		Principal:        e.cfg.Principal,
		Action:           s.manifest.Tool.Cedar.Action,
		ResourceType:     s.manifest.Tool.Cedar.Resource,
		Session:          s.id,
		Tool:             s.manifest.Tool.Name,
		Command:          cmd.Name,
		Args:             t.args,
		URL:              target,
		URLDomain:        host,
		DomainSets:       sc.DomainSets(host),
		PageState:        before.Map(),
		RiskTier:         cmd.RiskTier,
		HumanApproved:    false,
		InteractionCount: t.count - 1,
		Counters:         s.counters(e.commands[s.manifest]),
		Time:             t.start,
	})
	t.decision.Cedar = "deny"
	if d.Allowed {
		t.decision.Cedar = "allow"
		t.decision.PolicyIDs = d.PolicyIDs // the permits that decided
	}
	if !d.Allowed {
		rule := "default deny"
		if len(d.PolicyIDs) > 0 {
			rule = "policy " + strings.Join(d.PolicyIDs, ", ")
		}
		reason := strings.Join(append(append([]string{}, d.Reasons...), d.Errors...), "; ")
		if reason == "" {
			reason = "no policy permits this call"
		}
		return &DenyError{Stage: "cedar", Rule: rule, Reason: reason, PolicyIDs: d.PolicyIDs}
	}

	// Human approval: until an out-of-band approval channel exists, a
	// command that needs one cannot run (fail closed, never self-approved).
	if cmd.HumanApproval || s.manifest.Tool.HumanApproval {
		return &DenyError{Stage: "approval", Rule: "human_approval",
			Reason: fmt.Sprintf("%s requires human approval and no approval channel is configured on this daemon", cmd.Name)}
	}
	return nil
}

package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// gate decides one call before anything happens in the browser:
//
//  1. the tab must be inside the scope now (a page may have moved it since
//     the last call); if not, it is reset and the call refused;
//  2. every scope-checked url argument, and where the action would send
//     the tab (the link a click follows, the form a click or submit_form
//     posts, the history entry go_back returns to), must be in scope;
//  3. a click that would submit a form is also a submit_form: the manifest
//     must declare submit_form, and its policies and approval apply too;
//  4. Cedar must allow the call (and the submit, for such a click);
//  5. a call that only a human's approval would let through (a forbid
//     lifted by `unless { resource.human_approved == true }`, or a command
//     the manifest marks human_approval) is passed back in held, to wait
//     for a human who answers through a channel the agent cannot reach
//     (see approve).
//
// Any error on the way is a denial.
func (e *Executor) gate(ctx context.Context, s *session, t *turn, cmd *toolclad.Command, before PageState, held *approvalHold) *DenyError {
	sc := s.backend.scope.Load()
	if before.URL == "" {
		return &DenyError{Stage: "observe", Rule: "page state", Reason: "the page state could not be read, so the call cannot be judged"}
	}
	if !isBlank(before.URL) {
		if v := sc.Check(before.URL); !v.Allowed {
			resetErr := s.resetTab(ctx)
			if s.tab != nil {
				st := s.readState(ctx)
				t.after = &st
			}
			return &DenyError{Stage: "scope", Rule: v.Rule,
				Reason: fmt.Sprintf("the tab was at %s, outside the scope (%s), before this call: %s; nothing was done", before.URL, v.Reason, resetNote(resetErr))}
		}
	}

	// Popups may have navigated out of scope since the last call.
	if closed, err := s.closeStrayTabs(ctx, sc, 0); err != nil || len(closed) > 0 {
		reason := "cannot list the session's tabs: " + fmt.Sprint(err)
		if err == nil {
			reason = "tab(s) opened by the page had left the scope and were closed: " + strings.Join(closed, "; ") + "; nothing was done"
		}
		return &DenyError{Stage: "scope", Rule: "popup", Reason: reason}
	}

	target := ""
	for _, a := range cmd.Args {
		if a.Type != toolclad.TypeURL || !a.ScopeCheck {
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

	submits := false
	switch cmd.Name {
	case "click", "submit_form":
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
			mode := "click"
			if cmd.Name == "submit_form" {
				mode = "submit"
			}
			d, err := el.destination(ctx, mode)
			if err != nil {
				return &DenyError{Stage: "scope", Rule: "element", Reason: "cannot tell where the " + cmd.Name + " leads: " + err.Error()}
			}
			if mode == "submit" && !d.InForm {
				return &DenyError{Stage: "args", Rule: "element", Reason: el.label + " is not in a form"}
			}
			submits = d.Submits
			if deny := checkDestination(sc, t, cmd.Name, el.label, d.URL); deny != nil {
				return deny
			}
			if d.Submits || mode == "submit" {
				if err := s.secretsMaySubmitTo(d.URL); err != nil {
					return &DenyError{Stage: "secrets", Rule: "secret domains", Reason: err.Error()}
				}
			}
			if d.URL != "" {
				target = d.URL
			}
		}
	case "type_text":
		el, named, err := s.target(ctx, t.args)
		if err != nil {
			return &DenyError{Stage: "args", Rule: "element", Reason: err.Error()}
		}
		text, _ := t.args["text"].(string)
		if err := s.checkSecrets(ctx, text, &el, named); err != nil {
			return &DenyError{Stage: "secrets", Rule: "secret domains", Reason: err.Error()}
		}
		if !named {
			el, err = s.focused(ctx)
		}
		if err == nil {
			err = el.call(ctx, isPasswordJS, &t.secret)
		}
		if err != nil {
			t.secret = true // cannot tell: keep the text out of the log
		}
		if s.secrets.onlyPlaceholders(text) {
			t.secret = false // placeholders reveal nothing, and keep the step replayable
		}
	case "go_back":
		hist, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
		if err != nil {
			return &DenyError{Stage: "observe", Rule: "history", Reason: "cannot read the tab's history: " + err.Error()}
		}
		if hist.CurrentIndex > 0 && int(hist.CurrentIndex) <= len(hist.Entries)-1 {
			prev := hist.Entries[hist.CurrentIndex-1].URL
			if deny := checkDestination(sc, t, "go_back", "the tab", prev); deny != nil {
				return deny
			}
			target = prev
		}
	}

	// A click that submits a form is a form submission: the rules written
	// for submit_form must not be dodged by clicking the submit button.
	var submitCmd *toolclad.Command
	if submits && cmd.Name == "click" {
		if submitCmd = s.manifest.Command("submit_form"); submitCmd == nil {
			return &DenyError{Stage: "manifest", Rule: "submit_form not declared",
				Reason: "this click would submit a form, and the manifest does not declare the submit_form command"}
		}
		t.submits = true
	}

	// Cedar sees the URL the call is about: its url argument or where the
	// action leads, else the page it acts on.
	if target == "" {
		target = before.URL
	}
	req := e.cedarRequest(s, t, cmd, target, before)
	j := e.judge(t, s, req, cmd, submitCmd)
	if j.deny != nil {
		return j.deny
	}
	held.why, held.reqs = j.why, j.reqs
	return nil
}

// cedarRequest is the Cedar request for a call about target (its url
// argument, where the action leads, or the page it acts on).
func (e *Executor) cedarRequest(s *session, t *turn, cmd *toolclad.Command, target string, before PageState) *cedar.Request {
	sc := s.backend.scope.Load()
	host := sc.Check(target).Host
	return &cedar.Request{
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
		Counters:         s.counters(),
		Time:             t.start,
	}
}

// checkDestination checks where an action would send the tab.
func checkDestination(sc *scope.Scope, t *turn, what, label, dest string) *DenyError {
	if dest == "" || strings.HasPrefix(strings.ToLower(dest), "javascript:") {
		return nil // no navigation (a javascript: link runs the page's own script)
	}
	v := sc.Check(dest)
	if !v.Allowed {
		return &DenyError{Stage: "scope", Rule: v.Rule,
			Reason: fmt.Sprintf("the %s on %s leads to %s: %s", what, label, dest, v.Reason)}
	}
	t.decision.Scope = v.Rule
	return nil
}

func isBlank(u string) bool { return u == "about:blank" }

package gate

import (
	"github.com/browsergate/browsergate/evidence"
)

// Outcome is what the executor read of the session's tabs after an
// action: what After judges.
type Outcome struct {
	Command string    // the command that acted
	State   PageState // the tab after it; State.URL == "": unreadable
	// Pages are the session's other tabs; PagesErr: they could not be
	// listed.
	Pages    []Page
	PagesErr error
	// Unjudged is the first navigation or form submission the page sent
	// during the action that the gate had not judged, which the
	// executor's acting guard stopped (nil: none).
	Unjudged *Unjudged
	// Asks: the agent could ask a human for a URL outside allowed_domains
	// (AsksOutside): a refusal of one says how.
	Asks bool
}

// Unjudged is a request the acting guard stopped: the rule it names and
// what the page did ("the page submitted a form to …").
type Unjudged struct {
	Rule   string
	Reason string
}

// After judges where an action left the session's tabs: an out-of-scope
// (or unreadable) tab is reset, out-of-scope popups are closed, and the
// call is refused at stage final_url: the action ran, and its outcome is
// refused. An action during which the page sent a navigation or a form
// submission the gate had not judged (Outcome.Unjudged) is refused at
// stage destination. Like Decide it is pure.
func After(check URLCheck, o *Outcome) Verdict {
	var v Verdict
	command := o.Command
	switch {
	case o.State.URL == "":
		v.Reset = true
		v.Deny = Deny(evidence.StageFinalURL, "page state",
			"the page could not be read after the %s, so it cannot be shown to be in scope", command)
	case !isBlank(o.State.URL) && !check(o.State.URL).Allowed:
		sv := check(o.State.URL)
		v.Reset = true
		v.Deny = Deny(evidence.StageFinalURL, sv.Rule,
			"the %s led the tab to %s, which is out of scope (%s)"+AskHint(o.Asks, sv), command, o.State.URL, sv.Reason)
	case o.PagesErr != nil:
		v.Reset = true
		v.Deny = Deny(evidence.StageFinalURL, "tabs", "cannot list the session's tabs after the %s: %v", command, o.PagesErr)
	case o.Unjudged != nil:
		v.Reset = true
		v.Deny = Deny(evidence.StageDestination, o.Unjudged.Rule, "during the %s %s; the request was stopped before it left", command, o.Unjudged.Reason)
	default:
		if closed := v.strayPages(check, o.Pages); len(closed) > 0 {
			v.Deny = Deny(evidence.StageFinalURL, "popup",
				"the %s opened tab(s) that left the scope or went where the gate had not judged, which were closed: %s", command, closedList(closed))
		}
	}
	return v
}

package gate

import (
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// Question is what Decide reads: the call, what the executor observed,
// and the configuration the call runs under. Decide reads nothing else.
type Question struct {
	Call  *toolclad.Call
	Facts *Facts
	// Observes and ChangesTab are what the executor's command table says
	// of the call's command: what it observes for the decision, and
	// whether it changes which tab the session acts in (or opens or closes
	// one). A call that may open a tab (OpensTab) changes tabs too.
	Observes   Observation
	ChangesTab bool
	// OpensTab: the call may open a tab or a window the browser makes
	// itself (a middle click, a click or a press_key of Enter or Space
	// with Control, Meta or Shift held). UserContext: the session works in
	// the user's own browser context (live, context = "user"), where
	// nothing of browsergate's holds such a tab: there the call is refused.
	OpensTab    bool
	UserContext bool
	// Scope is the manifest's compiled scope (its domain sets name
	// url_domain's parents in Cedar); Check judges a URL: the scope, and
	// the daemon's own endpoints, which no scope grants (nil: Scope.Check).
	Scope     *scope.Scope
	Check     URLCheck
	Policies  *cedar.Engine
	Secrets   *Secrets
	Principal string
	Groups    []string // the principal's groups
	Session   string
	Limits    *Limits
	Now       time.Time
	// Approved: a human approved this very call; Cedar sees
	// human_approved = true and the manifest's human_approval is met.
	Approved bool
}

// URLCheck judges one URL.
type URLCheck func(url string) scope.Verdict

func (q *Question) check(u string) scope.Verdict {
	if q.Check != nil {
		return q.Check(u)
	}
	return q.Scope.Check(u)
}

// Observation is what a command's decision needs observed beyond the
// page state and the session's tabs; each entry of the executor's command
// table names one. A scope-checked url argument is judged for every
// command, so navigate needs nothing more.
type Observation int

// The observations.
const (
	ObserveNothing      Observation = iota // the page state and popups only
	ObserveClick                           // the element clicked, and where the click leads
	ObserveSubmit                          // the form submitted, and where it posts
	ObserveField                           // the element typed into: its page, its kind
	ObserveHistory                         // the history entry go_back returns to
	ObserveTab                             // the tab a tab command names (list_tabs' listing)
	ObserveKey                             // the element a key goes into, and where the key leads
	ObservePoint                           // the element the mouse moves over
	ObserveSelect                          // the select or listbox, and where choosing the option leads
	ObserveUpload                          // the file input, and the file (read and copied)
	ObserveScript                          // the document execute_js runs in, when it names an element or a frame
	ObserveDrop                            // the element dragged, the one it is dropped on, and where a drop there leads
	ObserveFields                          // each field fill_form types into: its page, its kind
	ObserveStorageState                    // the saved signed-in state a state command names (read and checked for a load)
)

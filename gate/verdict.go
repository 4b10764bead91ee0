package gate

import "github.com/browsergate/browsergate/cedar"

// Verdict is Decide's answer: a refusal, or what the call needs (a
// human's approval) and what acting on it involves; and what the browser
// must be made to do (the executor enforces it) whatever the answer.
type Verdict struct {
	Deny *DenyError
	// Approval says why a human must approve the call first (empty: no
	// approval needed).
	Approval []string
	// Requests are the Cedar requests decided: the call's, and, for a
	// click that submits a form, the submission's as submit_form.
	Requests []*cedar.Request
	Submits  bool // a click that submits a form: judged and counted as a submit_form too
	Masked   bool // type_text into a password field: the text is kept out of the evidence
	// MaskedFields are the fields of a fill_form (by index) whose text is
	// kept out of the evidence, as Masked keeps type_text's.
	MaskedFields []int
	Target       string // the URL the call is about
	// Outside: a navigate outside allowed_domains that a human must
	// approve (ask_external); after the approval the executor makes its
	// origin reachable for the session (OutsideOrigins).
	Outside *Outside
	// Recorded in the evidence.
	ScopeRule string
	Cedar     string // "allow", "deny", or "" when not reached
	PolicyIDs []string
	// Enforce: reset the tab to about:blank; close these popups.
	Reset bool
	Close []PageID
	// Release: the user's tabs the session adopted that left the scope:
	// let go (interception off, left open).
	Release []PageID
}

package gate

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// Decide judges one call. It is a pure function of the question: no
// browser, no clock but q.Now, no side effects. The stages, in order:
// arguments, limits, what could be observed, scope (the page the tab is
// on, popups, url arguments, where the action leads), secrets, the
// manifest (a click that submits needs submit_form), Cedar, and whether a
// human's approval is needed. Any error on the way is a denial.
func Decide(q *Question) Verdict {
	v := Preflight(q)
	if v.Deny == nil {
		v.Deny = v.judge(q)
	}
	return v
}

// Preflight is the part of Decide that needs no facts from the browser:
// the tool must be declared, the arguments must fit, and the session must
// be within its limits. The loop runs it before it starts a browser.
func Preflight(q *Question) Verdict {
	var v Verdict
	call, m := q.Call, q.Call.Manifest
	switch {
	case call.Command == nil:
		v.Deny = Deny(evidence.StageManifest, "undeclared tool",
			"%s is not a tool of this server: no manifest declares it", clip(call.Tool, MaxToolNameLen))
	case call.ArgErr != nil:
		v.Deny = &DenyError{Stage: evidence.StageArgs, Rule: argRule(call.ArgErr), Reason: pagetext.Value(argReason(call.ArgErr))} // it quotes the agent's arguments
	default:
		if why := q.Limits.Expiry(&m.Browser, q.Now); why != "" {
			v.Deny = Deny(evidence.StageLimits, ruleName(why), "session expired (%s); reconnect to start a new session", why)
		} else if why := q.Limits.BudgetUsed(&m.Browser); why != "" {
			// A budget, not an expiry: it is not renewed by a new session
			// (which would also reset the counters Cedar's rate limits
			// read), so the agent must reconnect.
			v.Deny = Deny(evidence.StageLimits, "max_interactions",
				"the session has used all %d interactions of max_interactions; no further call runs in it (reconnect for a new session)", m.Browser.MaxInteractions)
		} else if q.OpensTab && q.UserContext {
			// Refused whatever the element: the page can make a link of
			// anything as the button goes up, and the tab the browser
			// would open for it sends its first request where no guard
			// of browsergate's is (no egress proxy in the user's context).
			v.Deny = Deny(evidence.StageArgs, "new tab",
				"a middle click, or a click or an Enter or Space with Control, Meta or Shift held, may open a tab the browser makes itself, which nothing of browsergate's holds in the user's own browser context: %s refuses it here, whatever the element%s",
				call.Command.Name, offer(m, ": open a URL with new_tab, which the gate judges and guards", "new_tab", "url"))
		} else if name := processWide(q); name != "" {
			v.Deny = Deny(evidence.StageArgs, "process-wide emulation",
				"emulate: %s is refused in the user's browser context: Chromium sets it for a whole renderer process, which the user's own tabs of the same site may share; "+
					"viewport, device, user agent, geolocation and network apply to the session's tabs alone", name)
		} else {
			v.Deny = placeholderArgs(q)
		}
	}
	return v
}

// ProcessWideEmulation are the emulate arguments Chromium applies to a
// renderer process rather than a page (Emulation.setTimezoneOverride,
// setLocaleOverride, setCPUThrottlingRate): in the user's context a
// session's tab may share its process with the user's own tabs, so they
// are refused there.
var ProcessWideEmulation = []string{"timezone", "locale", "cpu"}

// processWide is the first process-wide emulate argument of an emulate
// call in the user's context ("" when none).
func processWide(q *Question) string {
	if !q.UserContext || q.Call.Command.Name != "emulate" {
		return ""
	}
	for _, name := range ProcessWideEmulation {
		if _, ok := q.Call.Args[name]; ok {
			return name
		}
	}
	return ""
}

func (v *Verdict) judge(q *Question) *DenyError {
	call, m, f := q.Call, q.Call.Manifest, q.Facts
	cmd := call.Command
	if f != nil && f.Dialog == nil && cmd.Name == "handle_dialog" {
		// No dialog to answer: say what became of the one held, even when
		// the page (crashed, gone) cannot be read.
		if d := dialogWaiting(cmd.Name, call.Args, nil, f.LostDialog); d != nil {
			return d
		}
	}
	if f == nil || f.State.URL == "" {
		return Deny(evidence.StageObserve, "page state", "the page state could not be read, so the call cannot be judged")
	}
	if d := dialogWaiting(cmd.Name, call.Args, f.Dialog, f.LostDialog); d != nil {
		return d
	}
	if d := v.pagesInScope(q); d != nil {
		return d
	}
	if len(f.Typed) > 0 || len(f.Held) > 0 {
		if d := selectorOracle(call.Manifest, cmd, call.Args); d != nil {
			return d
		}
		if q.ChangesTab {
			return Deny(evidence.StageSecrets, "secret tab",
				"a secret was typed on this site: %s may not run until the tab has left it%s, so that the pages that may hold the value stay the ones the gate watches",
				cmd.Name, offer(call.Manifest, " (navigate away first)", "navigate", "url"))
		}
	}
	for _, a := range cmd.Args {
		if a.Type != toolclad.TypeURL || !a.ScopeCheck {
			continue
		}
		u, _ := call.Args[a.Name].(string)
		if u == "" {
			continue
		}
		sv := q.check(u)
		if sv.Ask && cmd.Name == "navigate" {
			// Outside allowed_domains, and the scope asks: a human
			// decides, each time (an origin approved before is asked
			// about again: an approval is for one navigate).
			if d := v.outside(q, a.Name, u, sv); d != nil {
				return d
			}
			continue
		}
		if !sv.Allowed {
			note := AskHint(AsksOutside(m), sv)
			if cmd.Name == "navigate" && m.Browser.Scope.AskExternal {
				note = NotAskable
			}
			return Deny(evidence.StageScope, sv.Rule, "argument %q: %s"+note, a.Name, sv.Reason)
		}
		v.ScopeRule, v.Target = sv.Rule, u
	}
	if d := v.leads(q); d != nil {
		return d
	}
	var submitCmd *toolclad.Command
	if v.Submits {
		// A click (or a key, or a listbox option) that submits a form is
		// a form submission: the rules written for submit_form must not
		// be dodged by clicking the submit button or pressing Enter.
		if submitCmd = m.Command("submit_form"); submitCmd == nil {
			return Deny(evidence.StageManifest, "submit_form not declared",
				"this %s would submit a form, and the manifest does not declare the submit_form command", cmd.Name)
		}
	}
	// Cedar sees the URL the call is about: its url argument or where the
	// action leads, else the page it acts on.
	if v.Target == "" {
		v.Target = f.State.URL
	}
	return v.cedar(q, submitCmd)
}

// dialogWaiting: while a dialog is held open for the agent, the only call
// is handle_dialog, and handle_dialog needs one; text answers a prompt.
// The refusal does not repeat the dialog's message (the reply that opened
// it had it): it is the page's. lost says what became of a held dialog
// that ended without an answer, if one did.
func dialogWaiting(command string, args map[string]any, d *Dialog, lost string) *DenyError {
	switch {
	case d != nil && command != "handle_dialog":
		return Deny(evidence.StageObserve, "dialog waiting",
			"a JavaScript %s dialog the page opened is waiting for an answer: answer it with handle_dialog first (its message was in the reply of the call that opened it)", d.Type)
	case d == nil && command == "handle_dialog" && lost != "":
		return Deny(evidence.StageArgs, "no dialog", "%v: %s", ErrNoDialog, lost)
	case d == nil && command == "handle_dialog":
		return Deny(evidence.StageArgs, "no dialog", "%v", ErrNoDialog)
	case d != nil && args["text"] != nil && args["text"] != "" && (d.Type != "prompt" || args["accept"] != true):
		return Deny(evidence.StageArgs, "argument text", "text answers only a prompt dialog, with accept: true (the waiting dialog is a %s)", d.Type)
	}
	return nil
}

// ruleBrowsingGroup is the rule a tab is refused by when its
// browsing-context group holds a page the session cannot guard (the
// executor's groups.go).
const ruleBrowsingGroup = "browsing context group"

// pagesInScope: the tab must be inside the scope now (a page may have
// moved it since the last call), and so must every popup. Out-of-scope
// tabs are reset or closed (enforce) and the call refused.
func (v *Verdict) pagesInScope(q *Question) *DenyError {
	f := q.Facts
	if u := f.State.URL; !isBlank(u) {
		if sv := q.check(u); !sv.Allowed {
			v.Reset = true
			if f.UserTab {
				// The user went there by hand: where is theirs to know.
				return Deny(evidence.StageScope, sv.Rule,
					"the user's tab was on a page outside the scope before this call; nothing was done")
			}
			return Deny(evidence.StageScope, sv.Rule,
				"the tab was at %s, outside the scope (%s), before this call; nothing was done", u, sv.Reason)
		}
	}
	if f.PagesErr != nil {
		return Deny(evidence.StageScope, "popup", "cannot list the session's tabs: %v", f.PagesErr)
	}
	if closed := v.strayPages(q.check, f.Pages); len(closed) > 0 {
		return Deny(evidence.StageScope, "popup",
			"tab(s) of the session had left the scope and were closed (the user's let go): %s; nothing was done", closedList(closed))
	}
	return nil
}

// strayPages marks for closing every popup that is out of scope, or whose
// own navigation the egress gate refused, and describes them: each URL
// marked on its own (the executor shows a page's URL masked for whoever
// may have chosen it), so the list goes into a refusal as its own text
// (closedList).
func (v *Verdict) strayPages(check URLCheck, pages []Page) []string {
	var out []string
	for _, p := range pages {
		if p.User && p.Held {
			continue // it left the scope once, and stays guarded (enforce)
		}
		if p.User {
			// The user's own tab, adopted: it is let go (or kept under
			// the guard, enforce), never closed.
			if p.RefusedNav != "" || (p.URL != "" && !isBlank(p.URL) && !check(p.URL).Allowed) {
				v.Release = append(v.Release, p.ID)
				out = append(out, "a page outside the scope (the user's tab: let go, unless pages of the session's can reach it)")
			}
			continue
		}
		if p.RefusedNav != "" {
			// Its own navigation was refused: it shows nothing of value
			// (a blank page or an error page). Where it was going is the
			// opener's choice: the call's list of refused requests names
			// it, masked for the document that made it (never here, masked
			// for the pages the call was on, where a page's guesses would
			// tell). Nor is the URL it shows named: it may be the very
			// string of the tab's URL, which the executor could not tell
			// from the tab's (and would show masked as the tab's).
			v.Close = append(v.Close, p.ID)
			out = append(out, "a popup (its own navigation was refused: see the refused requests)")
			continue
		}
		if p.URL == "" || isBlank(p.URL) {
			continue
		}
		if sv := check(p.URL); !sv.Allowed {
			v.Close = append(v.Close, p.ID)
			out = append(out, pagetext.Value(p.URL)+" ("+pagetext.Value(sv.Reason)+")")
		}
	}
	return out
}

// closedList is strayPages' descriptions as one text of browsergate's own,
// the page's values in it marked.
func closedList(closed []string) error {
	return pagetext.Ownf("%s", strings.Join(closed, "; "))
}

// leads judges where the command's action would send the tab, and the
// element and secrets rules of the commands that act on an element.
func (v *Verdict) leads(q *Question) *DenyError {
	cmd, f := q.Call.Command, q.Facts
	switch q.Observes {
	case ObservePoint, ObserveUpload:
		if f.Element == nil {
			return Deny(evidence.StageObserve, "element", "the element was not observed")
		}
		if f.Element.Err != nil {
			return Deny(evidence.StageArgs, "element", "%v", f.Element.Err)
		}
		files := f.Element.Files
		if len(files) == 0 && f.Element.File != nil {
			files = []*File{f.Element.File}
		}
		for _, file := range files {
			if len(file.Holds) > 0 {
				if err := q.Secrets.mayAttach(file.Name, file.Holds, f.State.URL); err != nil {
					return Deny(evidence.StageSecrets, "secret domains", "%v", err)
				}
			}
		}
	case ObserveStorageState:
		return storageStateLeads(q)
	case ObserveScript:
		return scriptDocument(q)
	case ObserveClick, ObserveSubmit, ObserveKey, ObserveSelect, ObserveDrop:
		return v.acts(q, q.Observes, cmd.Name, f.Element)
	case ObserveField:
		text, _ := q.Call.Args["text"].(string)
		masked, d := v.field(q, f.Element, text)
		v.Masked = masked
		return d
	case ObserveFields:
		return v.fields(q)
	case ObserveTab:
		return v.tab(q)
	case ObserveHistory:
		if f.History == nil {
			return Deny(evidence.StageObserve, "history", "the tab's history was not observed")
		}
		if f.History.Err != nil {
			return Deny(evidence.StageObserve, "history", "%v", f.History.Err)
		}
		if to := f.History.To; to != "" {
			if dn := v.destination(q, cmd.Name, "the tab", to); dn != nil {
				return dn
			}
			v.Target = to
		}
	}
	return nil
}

// acts judges an action on the element el (observed as kind): what says
// what it is in messages (the command's name, or the single command a
// field of fill_form is judged as). It judges where the action leads, a
// form it submits, and the secrets' domains.
func (v *Verdict) acts(q *Question, kind Observation, what string, el *Element) *DenyError {
	f := q.Facts
	if el == nil {
		return Deny(evidence.StageObserve, "element", "the element was not observed")
	}
	if el.Err != nil {
		return Deny(evidence.StageArgs, "element", "%v", el.Err)
	}
	if !el.Named {
		return nil // a click needs a named element: the arguments say so
	}
	if el.DestErr != nil {
		return Deny(evidence.StageScope, "element", "cannot tell where the %s leads: %v", what, el.DestErr)
	}
	d := el.Dest
	submit := kind == ObserveSubmit
	if d.Embeds && !submit {
		return Deny(evidence.StageArgs, "element",
			"the %s on %s may land inside an embedded document (iframe, object or embed), which the gate cannot see into", what, el.Label)
	}
	if submit && !d.InForm {
		return Deny(evidence.StageArgs, "element", "%s is not in a form", el.Label)
	}
	if u := leadsTo(d); q.ChangesTab && (u != "" || d.Submits) {
		// The browser opens such a click's link or form in a tab of
		// its own making, whose first request it sends before the
		// guard can hold the tab: so the executor cancels the
		// opening, and the gate says so first.
		return Deny(evidence.StageArgs, "element",
			"the %s on %s would open %s in a new tab or window, which browsergate does not let the page's click do%s",
			what, el.Label, cmp.Or(u, "a form's submission"), offer(q.Call.Manifest, ": open it with new_tab, which the gate judges and guards", "new_tab", "url"))
	}
	v.Submits = v.Submits || d.Submits && !submit // a click that submits (any field's, for fill_form)
	for _, u := range append([]string{d.URL}, d.URLs...) {
		if dn := v.destination(q, what, el.Label, u); dn != nil {
			return dn
		}
	}
	if d.Submits || submit {
		if err := q.Secrets.maySubmitTo(f.Typed, d.URL); err != nil {
			return Deny(evidence.StageSecrets, "secret domains", "%v", err)
		}
	}
	// Leaving a site a secret was typed on goes by navigate or
	// go_back, which empty the page (and close its popups) before
	// the tab leaves; a click would let the old page's last handlers
	// and its popups send as the tab goes.
	for _, u := range append([]string{d.URL}, d.URLs...) {
		if u == "" || strings.HasPrefix(strings.ToLower(u), "javascript:") {
			continue
		}
		if err := q.Secrets.maySubmitTo(f.Held, u); err != nil {
			return Deny(evidence.StageSecrets, "secret domains",
				"a secret was typed on this site, and the %s on %s leads to %s, outside its domains%s",
				what, el.Label, u, offer(q.Call.Manifest, ": leave the site with navigate, which empties the page first", "navigate", "url"))
		}
	}
	if d.URL != "" {
		v.Target = d.URL
	}
	return nil
}

// field judges text typed into the element el, as type_text types it:
// the secrets' rules, and no unguarded page beside the field's for a
// secret. masked: the text is kept out of the evidence.
func (v *Verdict) field(q *Question, el *Element, text string) (masked bool, d *DenyError) {
	f := q.Facts
	if el == nil {
		return false, Deny(evidence.StageObserve, "element", "the element was not observed")
	}
	if el.Err != nil {
		return false, Deny(evidence.StageArgs, "element", "%v", el.Err)
	}
	if err := q.Secrets.MayType(text, el); err != nil {
		return false, Deny(evidence.StageSecrets, "secret domains", "%v", err)
	}
	if secs := q.Secrets.Placeholders(text); len(secs) > 0 {
		if f.BesideErr != nil {
			return false, Deny(evidence.StageObserve, "tabs", "cannot list the tabs, so secret %s is not typed: %v", secs[0].Name, f.BesideErr)
		}
		if len(f.Beside) > 0 {
			return false, Deny(evidence.StageSecrets, ruleBrowsingGroup, "%v", BesideError(secs[0].Name, f.Beside))
		}
	}
	// Text typed into a password field is kept out of the evidence; so is
	// text typed where the field could not be told (the focus is in an
	// iframe, say). Placeholders reveal nothing, and keep the step
	// replayable.
	return (el.FieldErr != nil || el.Field.Password || !el.Field.Field) && !q.Secrets.onlyPlaceholders(text), nil
}

// tab judges switch_tab and close_tab: the tab must be one list_tabs
// shows now; a tab to act in must be inside the scope; the session's first
// tab closes only with the session; a user's tab closes only if the
// manifest allows it.
func (v *Verdict) tab(q *Question) *DenyError {
	cmd, f := q.Call.Command, q.Facts
	if f.TabErr != nil {
		return Deny(evidence.StageObserve, "tab", "%v", f.TabErr)
	}
	id, _ := q.Call.Args["tab"].(string)
	t := f.Tab
	if t == nil {
		return Deny(evidence.StageArgs, "tab", "there is no tab %s among the tabs this session may use%s", id, offer(q.Call.Manifest, " (list_tabs lists them)", "list_tabs"))
	}
	v.Target = t.URL
	switch cmd.Name {
	case "switch_tab":
		if !isBlank(t.URL) {
			if sv := q.check(t.URL); !sv.Allowed {
				return Deny(evidence.StageScope, sv.Rule, "tab %s is at %s, outside the scope: %s", id, t.URL, sv.Reason)
			}
		}
		if out := groupOutsiders(f.TabGroup); len(out) > 0 {
			// A page the session cannot guard could script or navigate
			// the tab, or be navigated by it: a way out of the scope, and
			// of a secret's domains, that no guard of the session's sees.
			return Deny(evidence.StageScope, ruleBrowsingGroup,
				"tab %s shares a browsing-context group with %s: one opened the other and can still script or navigate it, so the session cannot govern tab %s alone%s",
				id, strings.Join(out, " and "), id, offers(q.Call.Manifest, "; ",
					offered{"close that tab first", "close_tab", []string{"tab"}},
					offered{"open the page in a tab of the session's own (new_tab)", "new_tab", []string{"url"}}))
		}
	case "close_tab":
		if t.Home {
			return Deny(evidence.StageArgs, "tab", "tab %s is the session's first tab, which closes when the session ends", id)
		}
		if t.User && !cmd.AllowUserTabs {
			return Deny(evidence.StageManifest, "allow_user_tabs",
				"tab %s is the user's own tab: close_tab closes it only if the manifest declares allow_user_tabs = true", id)
		}
	}
	return nil
}

// selectorOracle refuses, while the tab is on the page a secret was typed
// into or a later page of the secret's domains (which may hold the value:
// a server that echoes a wrong password back into the field), a probe
// that could test the secret's value: execute_js, which can read it and
// pass it on in any spelling; save_pdf, whose file holds the page's text
// in compressed glyph streams that no byte search finds a value in (an
// upload of it would pass the secret's domain rule); a selector with an attribute
// value test — on a page that copies a field's value into its value
// attribute (as controlled inputs do) it answers yes or no about a prefix,
// and a search would read the secret a character at a time — and
// wait_for's text and text_gone, on a page that echoes the value. In a selector, "="
// appears only in an attribute value test, and a CSS escape or comment
// could spell or hide one, so any of them is refused.
func selectorOracle(m *toolclad.Manifest, cmd *toolclad.Command, args map[string]any) *DenyError {
	switch cmd.Name {
	case "execute_js":
		return Deny(evidence.StageSecrets, "secret oracle",
			"a secret was typed on this site: execute_js may not run on its pages, or a script could read the value and pass it on in a form the masker does not know")
	case "save_pdf":
		return Deny(evidence.StageSecrets, "secret oracle",
			"a secret was typed on this site: save_pdf may not print its pages, whose text a PDF holds in a form the masker does not read, so the value could leave in the file")
	}
	for _, a := range cmd.Args {
		s, _ := args[a.Name].(string)
		switch {
		case a.Type == toolclad.TypeSelector && strings.ContainsAny(s, "=\\") || strings.Contains(s, "/*"):
			return Deny(evidence.StageSecrets, "secret oracle",
				"a secret was typed on this site: a selector may not test attribute values here, nor hold a CSS escape or comment (argument %q), or it could read the secret a character at a time", a.Name)
		case cmd.Name == "wait_for" && (a.Name == "text" || a.Name == "text_gone" || a.Name == "name") && s != "":
			return Deny(evidence.StageSecrets, "secret oracle",
				"a secret was typed on this site: wait_for may not test the page's text here (argument %q), or it could read the secret a piece at a time%s",
				a.Name, offer(m, "; wait for a selector instead", "wait_for", "selector"))
		}
	}
	for _, sel := range nestedSelectors(cmd.Name, args) {
		if strings.ContainsAny(sel.value, "=\\") || strings.Contains(sel.value, "/*") {
			return Deny(evidence.StageSecrets, "secret oracle",
				"a secret was typed on this site: a selector may not test attribute values here, nor hold a CSS escape or comment (argument %q), or it could read the secret a character at a time", sel.name)
		}
	}
	return nil
}

// scriptDocument judges the document execute_js runs in when it names an
// element or a frame: it must be inside the scope (about:blank and
// about:srcdoc are their parent's). The tab's own page was judged
// already; a frame out of the scope (a data: document, say) is not the
// agent's to script. A typed secret's site is the no-oracle rule's
// (selectorOracle), through the secrets the executor finds held there.
func scriptDocument(q *Question) *DenyError {
	el := q.Facts.Element
	if el == nil {
		return nil // no ref, no frame: the tab's own page
	}
	if el.Err != nil {
		return Deny(evidence.StageArgs, "element", "%v", el.Err)
	}
	if u := el.Document; u != "" && !isBlank(u) && u != "about:srcdoc" {
		if sv := q.check(u); !sv.Allowed {
			return Deny(evidence.StageScope, sv.Rule, "%s: the frame's document %s is outside the scope (%s): a frame out of the scope is not the agent's to script", el.Label, u, sv.Reason)
		}
	}
	return nil
}

// namedSelector is a CSS selector an argument holds, and where.
type namedSelector struct{ name, value string }

// nestedSelectors are the CSS selectors a call holds other than in
// selector arguments: drag's from and to when they are not refs, and the
// selector of each of fill_form's fields.
func nestedSelectors(cmd string, args map[string]any) []namedSelector {
	var out []namedSelector
	switch cmd {
	case "drag":
		for _, name := range []string{"from", "to"} {
			if s, _ := args[name].(string); s != "" && !toolclad.IsRef(s) {
				out = append(out, namedSelector{name, s})
			}
		}
	case "fill_form":
		list, _ := args["fields"].([]any)
		for i, item := range list {
			if rec, ok := item.(map[string]any); ok {
				if s, _ := rec["selector"].(string); s != "" {
					out = append(out, namedSelector{fmt.Sprintf("fields[%d].selector", i), s})
				}
			}
		}
	}
	return out
}

// destination checks where an action would send the tab. A link out of
// the scope is refused even when a human could be asked for its URL: the
// refusal says how (a navigate), since a click's destination is the
// page's to choose, and an approval is for the URL the agent names.
func (v *Verdict) destination(q *Question, what, label, dest string) *DenyError {
	if dest == "" || strings.HasPrefix(strings.ToLower(dest), "javascript:") {
		return nil // no navigation (a javascript: link runs the page's own script)
	}
	sv := q.check(dest)
	if !sv.Allowed {
		return Deny(evidence.StageScope, sv.Rule, "the %s on %s leads to %s: %s"+AskHint(AsksOutside(q.Call.Manifest), sv), what, label, dest, sv.Reason)
	}
	v.ScopeRule = sv.Rule
	return nil
}

// argRule extracts the rule name of an argument error.
func argRule(err error) string {
	var ae *toolclad.ArgError
	if errors.As(err, &ae) {
		return "argument " + ae.Arg + ": " + ae.Rule
	}
	return "arguments"
}

// argReason is the refusal's reason for the arguments err refuses: each
// argument's problem, on one line, joined by "; " (errors.Join would put
// them on lines of their own, which a refusal's one-line reason shows as
// a literal \n).
func argReason(err error) string {
	aes := toolclad.ArgErrors(err)
	if len(aes) == 0 {
		return err.Error()
	}
	parts := make([]string, len(aes))
	for i, ae := range aes {
		parts[i] = ae.Error()
	}
	return strings.Join(parts, "; ")
}

// ruleName is the bound an expiry reason names (its text up to ':').
func ruleName(expired string) string {
	name, _, _ := strings.Cut(expired, ":")
	return name
}

func isBlank(u string) bool { return u == "about:blank" }

// MaxToolNameLen bounds the name of an undeclared tool as a refusal quotes
// it (and as the evidence records it).
const MaxToolNameLen = 200

// clip cuts s to at most n bytes, at a character's start, marking the cut
// with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // a UTF-8 continuation byte
		cut--
	}
	return s[:cut] + "…"
}

// leadsTo is the first destination of d that loads a document (a
// javascript: URL runs in the page instead): "" when none.
func leadsTo(d Destination) string {
	for _, u := range append([]string{d.URL}, d.URLs...) {
		if u != "" && !strings.HasPrefix(strings.ToLower(u), "javascript:") {
			return u
		}
	}
	return ""
}

package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/toolclad"
)

// facts are everything the decision on one call needs to know of the
// browser, read by observe from sources the page cannot forge (CDP
// domains and the gate's isolated world, never the page's own world). A
// fact that could not be read is recorded as an error: decide refuses
// what it cannot judge.
type facts struct {
	State PageState // the tab before the call; State.URL == "": unreadable
	// UserTab: the tab is a user's the session adopted (where the user
	// may have gone by hand: an out-of-scope URL there is not shown).
	UserTab bool
	Forms   int // forms in the document (-1: unknown)
	// Pages are the session's other tabs (popups its pages opened).
	Pages    []pageFact
	PagesErr error
	// Element is the element the call acts on, for commands whose entry
	// observes one (nil otherwise).
	Element *elementFact
	// History is the history entry go_back or go_forward goes to, when
	// observed.
	History *historyFact
	// Typed are the secrets typed on the current page since it loaded.
	Typed []*toolclad.Secret
	// Held are the secrets typed in the session whose domains the tab is
	// on: a later page of the site may hold the value too (a server that
	// echoes a wrong password back, storage).
	Held []*toolclad.Secret
	// Dialog is the JavaScript dialog held open for the agent (nil: none);
	// while one is, the page's scripts are stopped and nothing else of the
	// page is read.
	Dialog *dialogInfo
	// LostDialog, for handle_dialog with no dialog held, says what became
	// of the one that was held and ended without the agent's answer ("":
	// none did).
	LostDialog string
	// Tab is the tab a tab command names, as list_tabs would list it now
	// (nil: no such tab in the listing); TabErr: the tabs could not be
	// read.
	Tab    *tabInfo
	TabErr error
	// TabGroup, for a user's tab the session has not adopted, are the
	// pages of its browsing-context group that are not the session's
	// (groups.go): switch_tab takes them with it, or is refused.
	TabGroup []groupMember
	// Beside, for type_text with a secret in the user's browser context,
	// names the unguarded pages that could reach the field's page
	// (unguardedBeside); BesideErr: the tabs could not be read.
	Beside    []string
	BesideErr error
}

// pageFact is one of the session's other tabs.
type pageFact struct {
	ID  target.ID
	URL string
	// RefusedNav is where the tab's own main-frame navigation was going
	// when the egress gate refused it ("" when none was): a popup opened
	// straight at a forbidden URL may still show about:blank.
	RefusedNav string
	// User: a tab of the user's the session adopted; never closed, only
	// let go.
	User bool
	// Held: a user's tab kept under the guard after it left the scope
	// (sessionTabs.held).
	Held bool
}

// elementFact is the element a call names (or the one it falls back to).
type elementFact struct {
	Named bool   // named by ref or selector by the agent
	Label string // how it is named, for messages
	Err   error  // it could not be found
	// For click and submit_form: where acting on it leads.
	Dest    destination
	DestErr error
	// For type_text: the target field.
	Field    fieldInfo
	FieldErr error
	// For upload_file: the file, as read and copied.
	File *fileFact
}

// historyFact is the history entry go_back or go_forward would go to.
type historyFact struct {
	To  string // "" when there is none
	Err error
}

// destination is what js/destination.js reports.
type destination struct {
	URL     string   `json:"url"`     // where the action leads ("": nowhere)
	URLs    []string `json:"urls"`    // every destination it may lead to (the form's action, each link on the path)
	Submits bool     `json:"submits"` // it submits a form
	InForm  bool     `json:"inForm"`
	Embeds  bool     `json:"embeds"` // a click may land in an embedded document (iframe, object, embed)
	// Downloads: a link on the way has the download attribute (the
	// browser downloads it rather than navigating, with no document
	// request the tab reports).
	Downloads bool `json:"downloads"`
}

// fieldInfo is what js/field.js reports.
type fieldInfo struct {
	URL      string `json:"url"`
	Field    bool   `json:"field"`
	Tag      string `json:"tag"`
	Password bool   `json:"password"`
	// MaxLength is how many characters the field keeps (-1: no limit).
	MaxLength int `json:"maxLength"`
}

// judged says what the action observed was judged to do: whether it
// submits a form and where to, and every destination it may lead to.
func (f *facts) judged() (posts bool, to, urls []string) {
	if f == nil || f.Element == nil {
		return false, nil, nil
	}
	d := f.Element.Dest
	if d.Submits {
		to = []string{d.URL}
	}
	return d.Submits, to, append([]string{d.URL}, d.URLs...)
}

// navigatesTo is where the agent's own navigation goes: navigate's url,
// the history entry go_back or go_forward goes to, or (reload) the page
// itself.
func (f *facts) navigatesTo(args map[string]any) string {
	if u, ok := args["url"].(string); ok && u != "" {
		return u
	}
	if f == nil {
		return ""
	}
	if f.History != nil {
		return f.History.To
	}
	return f.State.URL
}

// observe reads the facts for one call of cmd with args. It changes
// nothing in the browser.
func (s *session) observe(ctx context.Context, cmd *toolclad.Command, args map[string]any) *facts {
	f := &facts{}
	kind := commandTable[cmd.Name].observes
	// The element a command acts on is read beside the page's state: both
	// only read, and neither needs the other. Not while a dialog is held
	// open (the page's scripts are stopped; the element is not read then).
	readElement := elementReader(kind)
	var element <-chan *elementFact
	if readElement != nil && s.tab.watch.pendingDialog() == nil {
		_, _ = s.world(ctx) // made once, for both reads
		ch := make(chan *elementFact, 1)
		go func() { ch <- readElement(s, ctx, args) }()
		element = ch
	}
	var all []*target.Info
	f.State, f.Forms, all, f.PagesErr = s.readPage(ctx)
	f.UserTab = s.tabOwner(s.tab.targetID()) == ownerUser
	// A tab between two documents (the page is moving itself) may not say
	// where it is for a moment: ask again, briefly, before giving up.
	for try := 0; f.State.URL == "" && try < 10 && ctx.Err() == nil; try++ {
		time.Sleep(100 * time.Millisecond)
		f.State, f.Forms, all, f.PagesErr = s.readPage(ctx)
	}
	f.Pages = s.pageFacts(all)
	f.Typed = s.typed.on(s.tab.watch.navigationCount())
	f.Held = s.egress.bound.heldHere()
	var read *elementFact
	if element != nil {
		read = <-element // the read has ended before observe does
	}
	if f.Dialog = s.tab.watch.pendingDialog(); f.Dialog != nil {
		return f // the gate refuses on the dialog
	}
	if cmd.Name == "handle_dialog" {
		f.LostDialog = s.tab.watch.takeLostDialog()
	}
	if readElement != nil {
		if element == nil {
			// A dialog held at the start has gone since (the browser
			// closed it): the element is read now.
			read = readElement(s, ctx, args)
		}
		f.Element = read
	}
	switch kind {
	case observeHistory:
		f.History = s.observeHistory(ctx, historyStep(cmd.Name))
	case observeUpload:
		f.Element = s.observeUpload(ctx, args)
	case observeTab:
		f.Tab, f.TabGroup, f.TabErr = s.observeTab(ctx, args)
	case observeField:
		if text, _ := args["text"].(string); len(s.secrets.placeholders(text)) > 0 && f.Element != nil {
			if everyTarget, err := chromedp.Targets(ctx); err != nil {
				f.BesideErr = err
			} else {
				f.Beside = s.unguardedBeside(everyTarget, f.Element.Field.URL)
			}
		}
	}
	return f
}

// elementReader is how an observation that only reads the element a
// command acts on (and where acting on it leads) reads it; nil for the
// others.
func elementReader(kind observation) func(*session, context.Context, map[string]any) *elementFact {
	switch kind {
	case observeClick:
		return func(s *session, ctx context.Context, args map[string]any) *elementFact {
			return s.observeElement(ctx, args, "click")
		}
	case observeSubmit:
		return func(s *session, ctx context.Context, args map[string]any) *elementFact {
			return s.observeElement(ctx, args, "submit")
		}
	case observeField:
		return (*session).observeField
	case observeKey:
		return (*session).observeKey
	case observePoint:
		return (*session).observePoint
	case observeSelect:
		return (*session).observeSelect
	}
	return nil
}

// observeTab finds the tab a tab command names in the listing list_tabs
// would give now: a tab the agent may not see is no tab at all. For a
// user's tab the session has not adopted, it also returns the pages of
// the tab's browsing-context group that are not the session's.
func (s *session) observeTab(ctx context.Context, args map[string]any) (*tabInfo, []groupMember, error) {
	id, _ := args["tab"].(string)
	all, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot list the tabs: %w", err)
	}
	tabs, _ := s.listTabs(all)
	for _, t := range tabs {
		if t.ID != id {
			continue
		}
		if t.Owner != ownerUser || s.egress.guard == nil || s.egress.guard.isUserTab(string(t.Target)) {
			return &t, nil, nil
		}
		ours := map[target.ID]bool{}
		for _, p := range sessionPagesExcept(all, s.tab.browserID, s.tabs.foreign, s.rootIDs()...) {
			ours[p.TargetID] = true
		}
		listed := map[target.ID]string{}
		for _, l := range tabs {
			if l.Owner == ownerUser {
				listed[l.Target] = l.ID
			}
		}
		var group []groupMember
		for _, p := range groupPeers(all, t.Target) {
			if !ours[p.TargetID] {
				group = append(group, groupMember{Target: p.TargetID, URL: p.URL, Listed: listed[p.TargetID]})
			}
		}
		return &t, group, nil
	}
	return nil, nil, nil
}

// observeElement finds the element a click or submit_form names and where
// acting on it leads. submit_form without one falls back to the focused
// form or the page's only form.
func (s *session) observeElement(ctx context.Context, args map[string]any, mode string) *elementFact {
	el, named, err := s.target(ctx, args)
	if !named && mode == "submit" {
		el, err = s.defaultForm(ctx)
		named = err == nil
	}
	ef := &elementFact{Named: named, Label: el.label, Err: err}
	if err != nil || !named {
		return ef
	}
	ef.DestErr = el.call(ctx, destinationJS, &ef.Dest, mode)
	return ef
}

// observeField finds the element type_text types into (named, or the
// focused one) and what kind of field it is.
func (s *session) observeField(ctx context.Context, args map[string]any) *elementFact {
	el, named, err := s.target(ctx, args)
	if err != nil {
		return &elementFact{Named: named, Err: err}
	}
	if !named {
		if el, err = s.focused(ctx); err != nil {
			return &elementFact{Label: "the focused element", FieldErr: err}
		}
	}
	ef := &elementFact{Named: named, Label: el.label}
	ef.FieldErr = el.call(ctx, fieldJS, &ef.Field)
	return ef
}

// observeHistory reads where a step through the tab's history (-1:
// go_back, +1: go_forward) would go.
func (s *session) observeHistory(ctx context.Context, step int64) *historyFact {
	e, err := historyEntry(ctx, step)
	if err != nil {
		return &historyFact{Err: err}
	}
	h := &historyFact{}
	if e != nil {
		h.To = e.URL
	}
	return h
}

// pageFacts describes the session's tabs other than its own.
func (s *session) pageFacts(all []*target.Info) []pageFact {
	own := s.tab.targetID()
	var out []pageFact
	for _, p := range all {
		if p.TargetID != own {
			out = append(out, pageFact{ID: p.TargetID, URL: p.URL, RefusedNav: s.egress.blocked.blockedNav(string(p.TargetID)),
				User: s.tabOwner(p.TargetID) == ownerUser, Held: s.tabs.held[p.TargetID]})
		}
	}
	return out
}

// otherPages lists the session's tabs other than its own, from all (the
// session's pages as listed beside a state read, with the error of that
// listing). A popup that has not committed its first URL yet is given up
// to settle to do so, so that where it goes can be judged: the pages are
// listed again until it has.
func (s *session) otherPages(ctx context.Context, settle time.Duration, all []*target.Info, err error) ([]pageFact, error) {
	deadline := time.Now().Add(settle)
	if err != nil {
		// That listing had the state read's shorter bound: once more on
		// ctx's.
		all, err = s.pages(ctx)
	}
	for {
		if err != nil {
			return nil, err
		}
		out := s.pageFacts(all)
		pending := false
		for _, pf := range out {
			if (pf.URL == "" || isBlank(pf.URL)) && pf.RefusedNav == "" {
				pending = true
			}
		}
		if !pending || time.Now().After(deadline) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		all, err = s.pages(ctx)
	}
}

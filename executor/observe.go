package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// judged says what the action observed was judged to do: whether it
// submits a form and where to, and every destination it may lead to.
func judged(f *facts) (posts bool, to, urls []string) {
	if f == nil {
		return false, nil, nil
	}
	els := f.Fields // fill_form's: each field's option or click
	if f.Element != nil {
		els = []*gate.Element{f.Element}
	}
	for _, el := range els {
		if el == nil {
			continue
		}
		d := el.Dest
		if d.Submits {
			posts, to = true, append(to, d.URL)
		}
		urls = append(append(urls, d.URL), d.URLs...)
	}
	return posts, to, urls
}

// navigatesTo is where the agent's own navigation goes: navigate's url,
// the history entry go_back or go_forward goes to, or (reload) the page
// itself.
func navigatesTo(f *facts, args map[string]any) string {
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
	var element <-chan *gate.Element
	if readElement != nil && s.tab.watch.pendingDialog() == nil {
		_, _ = s.world(ctx) // made once, for both reads
		ch := make(chan *gate.Element, 1)
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
	s.retireStateScripts(ctx, f.State.URL)
	f.Typed = s.typed.On(s.tab.watch.navigationCount())
	f.Held = s.egress.bound.HeldHere()
	var read *gate.Element
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
	case gate.ObserveHistory:
		f.History = s.observeHistory(ctx, historyStep(cmd.Name))
	case gate.ObserveUpload:
		f.Element = s.observeUpload(ctx, args)
	case gate.ObserveScript:
		if f.Element = s.observeScript(ctx, args); f.Element != nil && f.Element.Document != "" {
			f.Held = append(f.Held, s.typedOn(f.Element.Document)...)
		}
	case gate.ObserveStorageState:
		name, _ := args["name"].(string)
		f.StorageState = s.observeStorageState(name, cmd.Name == "load_storage_state")
	case gate.ObserveTab:
		f.Tab, f.TabGroup, f.TabErr = s.observeTab(ctx, args)
	case gate.ObserveFields:
		s.observeFields(ctx, args, f)
	case gate.ObserveField:
		if text, _ := args["text"].(string); len(s.secrets.Load().Placeholders(text)) > 0 && f.Element != nil {
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
func elementReader(kind gate.Observation) func(*session, context.Context, map[string]any) *gate.Element {
	switch kind {
	case gate.ObserveClick:
		return func(s *session, ctx context.Context, args map[string]any) *gate.Element {
			return s.observeElement(ctx, args, "click")
		}
	case gate.ObserveSubmit:
		return func(s *session, ctx context.Context, args map[string]any) *gate.Element {
			return s.observeElement(ctx, args, "submit")
		}
	case gate.ObserveField:
		return (*session).observeField
	case gate.ObserveKey:
		return (*session).observeKey
	case gate.ObservePoint:
		return (*session).observePoint
	case gate.ObserveSelect:
		return (*session).observeSelect
	case gate.ObserveDrop:
		return (*session).observeDrop
	}
	return nil
}

// observeTab finds the tab a tab command names in the listing list_tabs
// would give now: a tab the agent may not see is no tab at all. For a
// user's tab the session has not adopted, it also returns the pages of
// the tab's browsing-context group that are not the session's.
func (s *session) observeTab(ctx context.Context, args map[string]any) (*gate.Tab, []gate.GroupMember, error) {
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
		tab := &gate.Tab{ID: t.ID, Page: gate.PageID(t.Target), URL: t.URL, User: t.Owner == ownerUser, Home: t.Home}
		if t.Owner != ownerUser || s.egress.guard == nil || s.egress.guard.isUserTab(string(t.Target)) {
			return tab, nil, nil
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
		var group []gate.GroupMember
		for _, p := range groupPeers(all, t.Target) {
			if !ours[p.TargetID] {
				group = append(group, gate.GroupMember{Page: gate.PageID(p.TargetID), URL: p.URL, Listed: listed[p.TargetID]})
			}
		}
		return tab, group, nil
	}
	return nil, nil, nil
}

// observeElement finds the element a click or submit_form names and where
// acting on it leads. submit_form without one falls back to the focused
// form or the page's only form.
func (s *session) observeElement(ctx context.Context, args map[string]any, mode string) *gate.Element {
	el, named, err := s.target(ctx, args)
	if !named && mode == "submit" {
		el, err = s.defaultForm(ctx)
		named = err == nil
	}
	ef := &gate.Element{Named: named, Label: el.label, Err: err}
	if err != nil || !named {
		return ef
	}
	ef.DestErr = el.call(ctx, destinationJS, &ef.Dest, mode)
	return ef
}

// observeHistory reads where a step through the tab's history (-1:
// go_back, +1: go_forward) would go.
func (s *session) observeHistory(ctx context.Context, step int64) *gate.History {
	e, err := historyEntry(ctx, step)
	if err != nil {
		return &gate.History{Err: err}
	}
	h := &gate.History{}
	if e != nil {
		h.To = e.URL
	}
	return h
}

// pageFacts describes the session's tabs other than its own.
func (s *session) pageFacts(all []*target.Info) []gate.Page {
	own := s.tab.targetID()
	var out []gate.Page
	for _, p := range all {
		if p.TargetID != own {
			out = append(out, gate.Page{ID: gate.PageID(p.TargetID), URL: p.URL, RefusedNav: s.egress.blocked.blockedNav(string(p.TargetID)),
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
func (s *session) otherPages(ctx context.Context, settle time.Duration, all []*target.Info, err error) ([]gate.Page, error) {
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

func isBlank(u string) bool { return u == "about:blank" }

package executor

import (
	"strings"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// A finished call is masked twice (record.go): for the agent, with the
// secrets its pages could hold (maskscope.go), and for the record and the
// log, with every secret of the session's manifest. The masking itself is
// package mask's; what is masked of a turn is here.

// maskState is p with its URL, title and domain masked as k masks a
// page's (turnMasks.page, turnMasks.url).
func maskState(k turnMasks, p *PageState) *PageState {
	if p == nil {
		return p
	}
	c := *p
	read := pageURL{tab: p.Tab, doc: p.Doc, url: p.URL}
	c.URL, c.Title, c.Domain = k.url(read), k.title(read, p.Title), k.page(p.URL).Mask(c.Domain)
	return &c
}

// maskedError keeps the error's identity (errors.Is) and masks its text.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// turnMasks are the maskers a finished call is masked with, for the
// record or for the agent.
type turnMasks struct {
	// record: for the evidence and the log, every secret of the session's
	// manifest, the agent's own texts masked too; else for the agent.
	record bool
	// values masks the page's values in the call's texts (its output, its
	// refusal, its error, the structured content).
	values *mask.Masker
	// page masks a page's domain, by that page's URL; url and title are
	// its URL and title in a tab as shown (session.shownURL,
	// session.shownTitle).
	page  func(url string) *mask.Masker
	url   func(p pageURL) string
	title func(p pageURL, title string) string
	// blocked masks a refused request's URL and the reason's copy of it,
	// or withholds both.
	blocked func(b Blocked) (m *mask.Masker, withheld bool)
}

// maskTurn masks what came from the pages, the browser and the agent in
// everything of a finished call that is returned, recorded or logged;
// browsergate's own words around them are left as they are (package pagetext).
func maskTurn(t *turn, k turnMasks) {
	// The page's URL, where a text quotes it as the page's value (a
	// refusal's "the tab was at …"), is shown as the state line shows it.
	var urls []pageURL
	if t.facts != nil {
		urls = append(urls, pageURL{t.facts.State.Tab, t.facts.State.Doc, t.facts.State.URL})
		for _, p := range t.facts.Pages { // a refusal names the popups it closed
			urls = append(urls, pageURL{tab: string(p.ID), url: p.URL})
		}
	}
	if t.after != nil {
		urls = append(urls, pageURL{t.after.Tab, t.after.Doc, t.after.URL})
	}
	urls = append(urls, t.left) // the URL final_url refused, before the reset
	for _, p := range t.pages {
		urls = append(urls, pageURL{tab: string(p.ID), url: p.URL})
	}
	pageURLs := func(text string) string {
		for _, u := range urls {
			if u.url != "" && strings.Contains(text, pagetext.Value(u.url)) {
				text = strings.ReplaceAll(text, pagetext.Value(u.url), pagetext.Done(k.url(u)))
			}
		}
		return text
	}
	if t.call != nil && t.call.Command != nil && commandTable[t.call.Command.Name].pageContent && !pagetext.HasMarks(t.out.Text) {
		// Page content that was not marked as it was read is the page's
		// as a whole: a source missed is masked, never shown.
		t.out.Text = pagetext.Value(t.out.Text)
	}
	t.out.Text = k.values.Finish(pageURLs(t.out.Text), k.record)
	if t.out.Structured != nil {
		t.out.Structured = k.values.MaskStructured(t.out.Structured, k.record)
	}
	if t.err != nil {
		// An error may quote the browser or the page anywhere: masked
		// whole, unless it marks the page's values in it (FinishAll), or
		// is browsergate's own sentence (pagetext.Own).
		msg := pageURLs(t.err.Error())
		if _, own := t.err.(*pagetext.Own); own {
			msg = k.values.Finish(msg, k.record)
		} else {
			msg = k.values.FinishAll(msg, k.record)
		}
		t.err = &maskedError{msg: msg, err: t.err}
	}
	if t.deny != nil {
		d := *t.deny
		d.Reason = k.values.Finish(pageURLs(d.Reason), k.record)
		t.deny = &d
	}
	if t.facts != nil {
		f := *t.facts
		f.State = *maskState(k, &f.State)
		t.facts = &f
	}
	if t.after != nil {
		t.after = maskState(k, t.after)
	}
	for i, b := range t.blocked {
		m, withheld := k.blocked(b)
		if withheld {
			t.blocked[i].URL, t.blocked[i].Reason = refusalWithheld, refusalWithheld
			continue
		}
		t.blocked[i].URL = m.Mask(pagetext.Unmarked(b.URL))
		t.blocked[i].Reason = m.Finish(reasonMarked(b), k.record)
	}
	// The granted permission requests go only to the record; a new list,
	// so that the agent's copy of the turn (record) shares none of it.
	if len(t.granted.list) > 0 {
		grants := make([]permissionGrant, len(t.granted.list))
		for i, g := range t.granted.list {
			g.URL, g.Origin = k.values.Mask(pagetext.Unmarked(g.URL)), k.values.Mask(pagetext.Unmarked(g.Origin))
			grants[i] = g
		}
		t.granted.list = grants
	}
}

// reasonMarked is a refused request's reason with the page's values in it
// marked: as its maker marked them, else where it quotes the URL or host.
func reasonMarked(b Blocked) string {
	if pagetext.HasMarks(b.Reason) {
		return b.Reason
	}
	return pagetext.MarkKnown(b.Reason, b.URL, hostOf(b.URL))
}

// noteReach follows the tab through a finished call: from where the
// previous call left it to where this one found it (the pages' own doing
// between calls), and from there to where it left it, unless the call
// was the agent's navigation.
func (s *session) noteReach(t *turn) {
	before, after := "", ""
	if t.facts != nil {
		before = hostOf(t.facts.State.URL)
	}
	if t.after != nil {
		after = hostOf(t.after.URL)
	}
	s.reach.mu.Lock()
	last := s.reach.last
	s.reach.mu.Unlock()
	cur := last
	if before != "" {
		s.carry(cur, before)
		cur = before
	}
	if after != "" {
		navigates := t.call != nil && t.call.Command != nil && specOf(t.call.Command.Name, t.call.Args).navigates
		if !navigates {
			s.carry(cur, after)
		}
		cur = after
	}
	s.reach.mu.Lock()
	s.reach.last, s.reach.page = cur, ""
	s.reach.mu.Unlock()
}

// maskAllWith masks everything of a call with m.
func maskAllWith(m *mask.Masker, record bool) turnMasks {
	return turnMasks{record: record, values: m, page: func(string) *mask.Masker { return m }, url: func(p pageURL) string { return m.Mask(p.url) },
		title: func(_ pageURL, title string) string { return m.Mask(title) }, blocked: func(Blocked) (*mask.Masker, bool) { return m, false }}
}

// turnMasks are the maskers of a finished call: for the record, every
// secret of the manifest; for the agent, those considered on the pages the
// call was on (before and after it, and the tab's now), a page's state by
// its own host, a refused request by the document that made it only
// (refusalMask).
func (s *session) turnMasks(t *turn, record bool) turnMasks {
	if record {
		return maskAllWith(s.masker.Load(), true)
	}
	hosts := []string{s.egress.bound.Host()}
	if t.facts != nil {
		hosts = append(hosts, hostOf(t.facts.State.URL))
	}
	if t.after != nil {
		hosts = append(hosts, hostOf(t.after.URL))
	}
	if t.call != nil {
		// A URL the call fetches (download): its server's answer (a file
		// name) is read too.
		if u, ok := t.call.Args["url"].(string); ok {
			hosts = append(hosts, hostOf(u))
		}
	}
	return turnMasks{
		values:  s.agentMasker(hosts...),
		page:    func(u string) *mask.Masker { return s.agentMasker(hostOf(u)) },
		url:     s.shownPageURL,
		title:   s.shownPageTitle,
		blocked: s.refusalMask,
	}
}

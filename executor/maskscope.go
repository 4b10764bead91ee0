package executor

import (
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// Which secrets the masker considers for what the agent is shown.
//
// A session masks its own manifest's secrets only (Executor.maskers). Of
// those, a text the agent is shown is masked for a secret only when the
// page the text comes from could hold its value:
//
//   - the page's host is on the secret's domains (the secret's own site,
//     which knows it, whether or not it was typed in the session); or
//   - the secret was typed in the session and the tab reached the page
//     from the secret's site without an agent navigation (navigate,
//     go_back, go_forward, reload) in between — a judged sign-in's
//     redirect to another host, a click on the site's page, a page that
//     moved itself, a switch to a popup — which may have carried the value
//     there (reached: once a host is reached so, for the rest of the
//     session).
//
// A page off a secret's domains that the tab reached otherwise never
// received the value (the secret binding holds what the site sends to its
// domains), so nothing of what it shows is masked for that secret: a
// hostile page that prints candidate runs learns nothing from the reply.
// A refused request in a call's list is masked for the secrets of the
// document that made it, or withheld (refusalMask).
// An entry of the tab's logs (a request, a console message) is masked
// for the secrets of the document it came from, whatever page the tab is
// on when the reply reads it (logMask). A document load came from every
// document that may have started it (guard_loaders.go).
// A page's URL is masked for the secrets of the documents that may have
// chosen it, not for its host's (shownURL).
// The evidence and the logs are masked for every secret of the manifest.

// secretReach is where the session's typed secrets may have gone without
// an agent navigation: by canonical host.
type secretReach struct {
	mu    sync.Mutex
	hosts map[string][]*toolclad.Secret
	last  string // the tab's host at the end of the previous call
	page  string // the host of the page the running call found the tab on
}

// observed notes the page the running call found the tab on (observe), for
// a call that leaves the page as it is: page content the call reads is
// that page's, even on a tab switched to without a commit the guard saw.
// It holds until the call is recorded (noteReach).
func (s *session) observed(url string) {
	s.reach.mu.Lock()
	defer s.reach.mu.Unlock()
	s.reach.page = hostOf(url)
}

// pageHosts are the hosts of the page the call reads: the tab's document
// as the guard last saw it commit, and as the call observed it.
func (s *session) pageHosts() []string {
	s.reach.mu.Lock()
	page := s.reach.page
	s.reach.mu.Unlock()
	return []string{s.egress.bound.Host(), page}
}

// considered are the session's secrets a text from pages on hosts is
// masked for, for the agent.
func (s *session) considered(hosts ...string) []*toolclad.Secret {
	if s.masker.Load() == nil {
		return nil
	}
	s.reach.mu.Lock()
	defer s.reach.mu.Unlock()
	var out []*toolclad.Secret
	add := func(sec *toolclad.Secret) {
		if !slices.Contains(out, sec) {
			out = append(out, sec)
		}
	}
	for _, h := range hosts {
		c, err := scope.CanonicalHost(h)
		if h == "" || err != nil {
			continue
		}
		for _, sec := range s.secrets.Load().All() { // the manifest's, and the operator's secret answers
			if s.onDomains(sec, c) {
				add(sec)
			}
		}
		for _, sec := range s.reach.hosts[c] {
			add(sec)
		}
	}
	return out
}

// onDomains reports whether canonical host c is on sec's domains.
func (s *session) onDomains(sec *toolclad.Secret, c string) bool {
	return s.secrets.Load().OnDomains(sec, c)
}

// carry notes that the tab went from host from to host to without an
// agent navigation: the typed secrets considered on from are considered
// on to from now on.
func (s *session) carry(from, to string) {
	if from == "" || to == "" || from == to {
		return
	}
	typed := s.egress.bound.Typed()
	if len(typed) == 0 {
		return
	}
	held := s.considered(from)
	c, err := scope.CanonicalHost(to)
	if err != nil {
		return
	}
	s.reach.mu.Lock()
	defer s.reach.mu.Unlock()
	for _, sec := range typed {
		if !slices.Contains(held, sec) || s.onDomains(sec, c) || slices.Contains(s.reach.hosts[c], sec) {
			continue
		}
		if s.reach.hosts == nil {
			s.reach.hosts = map[string][]*toolclad.Secret{}
		}
		s.reach.hosts[c] = append(s.reach.hosts[c], sec)
	}
}

// agentMasker masks, for the agent, text from pages on hosts: the
// secrets considered there, the agent's own texts as it wrote them.
func (s *session) agentMasker(hosts ...string) *mask.Masker {
	return s.heldMasker(nil, hosts...)
}

// heldMasker masks, for the agent, text from pages on hosts that was sent
// or logged while the binding held secrets held: the secrets considered on
// hosts, and those.
func (s *session) heldMasker(held []*toolclad.Secret, hosts ...string) *mask.Masker {
	return s.masker.Load().Only(append(s.considered(hosts...), held...)).ForAgent(s.agent)
}

// logMask masks, for the agent, an entry of the tab's logs (pagelog.go):
// for the secrets considered on the documents that may have made it, as
// the browser said as it was logged (logged.docs). Only that: not for
// where a request went, what it carries or the pages the call reads, nor
// for what another tab or the binding held then, or a page could send or
// log its guesses and learn from the reply which one was masked. So a
// value the secret's page logged or sent off its domains stays masked
// after the agent has taken the tab elsewhere, and nothing another page
// logged is masked for the secret. An entry of a document not known yet
// is masked for the pages the call reads. withheld: the documents are not
// masked for the same secrets (docsMasker), and nothing of the entry can
// be shown.
func (s *session) logMask(e logged) (mask func(string) string, withheld bool) {
	if e.unknown && s.hasSecrets() {
		return func(string) string { return refusalWithheld }, true
	}
	if e.docs == nil {
		return s.agentMasker(s.pageHosts()...).MaskSource, false
	}
	m, withheld := s.docsMasker(e.docs)
	if withheld {
		return func(string) string { return refusalWithheld }, true
	}
	return m.MaskSource, false
}

// logAccounts reports whether an entry of the tab's logs is masked for
// every one of secs: else what may hold them cannot be shown to the agent
// masked, nor in clear (withheld).
func (s *session) logAccounts(e logged, secs []*toolclad.Secret) bool {
	hosts := e.docs
	if hosts == nil {
		hosts = s.pageHosts()
	}
	held := s.considered(hosts...)
	return !slices.ContainsFunc(secs, func(sec *toolclad.Secret) bool { return !slices.Contains(held, sec) })
}

// docsMasker masks, for the agent, a text one of docs (hosts) made: the
// secrets considered on them, when every one is masked for the same; else
// (withheld) the text cannot be shown, masked or in clear, for what it
// shows would depend on which of them made it. No document (the agent's
// own navigation of a fresh tab) masks nothing but the agent's own texts.
func (s *session) docsMasker(docs []string) (m *mask.Masker, withheld bool) {
	if len(docs) == 0 {
		return s.agentMasker(), false
	}
	secs := make([][]*toolclad.Secret, len(docs))
	for i, d := range docs {
		secs[i] = s.considered(d)
	}
	if !sameSecrets(secs) {
		return nil, true
	}
	return s.agentMasker(docs[0]), false
}

// sameSecrets reports whether every one of secs holds the same secrets.
func sameSecrets(secs [][]*toolclad.Secret) bool {
	for _, o := range secs[min(1, len(secs)):] {
		if len(o) != len(secs[0]) || slices.ContainsFunc(o, func(sec *toolclad.Secret) bool { return !slices.Contains(secs[0], sec) }) {
			return false
		}
	}
	return true
}

// hasSecrets reports whether the session has secrets to mask.
func (s *session) hasSecrets() bool {
	return s.masker.Load() != nil && len(s.secrets.Load().All()) > 0
}

// shownURL is the URL u of frame (a tab's: its target id; "" when not
// known) as the agent is shown it: masked for the secrets of the
// documents that may have chosen it there (urlChoosers), when every one
// is masked for the same; with all but
// its origin withheld when they are not (a page could send a window of
// its group to the secret's site with its guesses in the URL, and read
// which came back masked), and, in a session with secrets, when who chose
// it is not known (in a frame of the session's: the secret's site may
// have sent it anywhere with its value in the URL); for its host's
// secrets, as its page is, in a tab of the user's the session does not
// hold. Not for its host's otherwise: a page that sends its own tab to the
// secret's site with guesses in the URL reads them back as it wrote them.
func (s *session) shownURL(frame, u string) string {
	return s.shownPageURL(pageURL{tab: frame, url: u})
}

// A pageURL is a tab's URL as it was read: the tab (its target id; ""
// when not known), the document it was read from (a read of the tab's
// state names it, gate.PageState.Doc; "" when the read names none: the
// browser's target list) and the URL.
type pageURL struct{ tab, doc, url string }

// shownPageURL is shownURL for a URL read from a document (p.doc): one
// the guard no longer has, or has not taken yet, as the tab's, is not
// known (guard_loaders.go, "Which document a read of a tab's URL is from").
func (s *session) shownPageURL(p pageURL) string {
	frame, u := p.tab, p.url
	docs, known := s.urlChoosers(p)
	// Not known: masked for its host, as its page is (a tab of the user's
	// the session does not hold); withheld where a page of the session's
	// could have made it not known (over 256 loads in a frame, an opener
	// the session does not hold), unless nothing can be in it (a fresh
	// tab's blank page, whose choosers are never known).
	m := s.agentMasker(hostOf(u))
	withheld := !known && s.hasSecrets() && !emptyPage(u) && s.egress.guard != nil && s.egress.guard.holds(frame, u)
	if known {
		m, withheld = s.docsMasker(docs)
	}
	if !withheld {
		return m.Mask(u)
	}
	origin := ""
	if p, err := url.Parse(u); err == nil && p.Scheme != "" && p.Host != "" {
		origin = s.agentMasker(append(docs, p.Host)...).Mask(p.Scheme + "://" + p.Host)
	}
	return origin + "/" + urlWithheld
}

// downloadValue shows, in a note of a download whose URL docs may have
// chosen (download.docs), one of its values (its URL, file name, why it
// was refused) as the agent is shown it: masked for their secrets, when
// every one is masked for the same, else withheld, as it is when who
// chose it is not known in a session with secrets. Not for the pages the
// call reads: a page in another tab could download its guesses while the
// agent works on the secret's site and read which came back masked.
func (s *session) downloadValue(docs []string, v string) string {
	m, withheld := s.docsMasker(docs)
	if withheld || docs == nil && s.hasSecrets() {
		return pagetext.Done(downloadWithheld)
	}
	return pagetext.Done(m.Mask(v))
}

// downloadWithheld stands for a value of a download's the agent is not
// shown (session.downloadValue).
const downloadWithheld = "[withheld: documents not masked for the same secrets may have chosen it]"

// emptyPage reports whether u is an empty document's URL, which holds
// nothing a page could choose.
func emptyPage(u string) bool {
	return u == "about:blank" || u == "about:srcdoc"
}

// shownTitle is the title of a page at URL u in tab frame as the agent
// is shown it: masked for the secrets considered on the page, unless it
// is the URL itself, which the browser gives as the title of a page that
// has none (yet): then as shownURL shows the URL.
func (s *session) shownTitle(frame, title, u string) string {
	return s.shownPageTitle(pageURL{tab: frame, url: u}, title)
}

// shownPageTitle is shownTitle for a page read from a document (p.doc).
func (s *session) shownPageTitle(pu pageURL, title string) string {
	u := pu.url
	if p, err := url.Parse(u); err == nil && title != "" && (title == u || p.Scheme+"://"+title == u) {
		return strings.TrimPrefix(s.shownPageURL(pu), p.Scheme+"://")
	}
	return s.agentMasker(hostOf(u)).Mask(title)
}

// urlWithheld stands for what the agent is not shown of a page's URL
// (shownURL).
const urlWithheld = "[withheld: documents not masked for the same secrets may have chosen this URL]"

// urlChoosers are the hosts of the documents that may have chosen p.url
// as the URL of p.tab ("": of any frame of the session's that had it),
// read from document p.doc when it names one (targetGuard.chosenBy).
// known is false when it is not known who did.
func (s *session) urlChoosers(p pageURL) (docs []string, known bool) {
	if s.egress.guard == nil {
		return nil, false
	}
	return s.egress.guard.chosenBy(p.tab, p.doc, p.url)
}

// maskDialog masks, for the agent, the message of a JavaScript dialog the
// document on host opened (as the browser names it, or the frame's parent
// for one of no host of its own): for the secrets considered on that
// document, not on the pages the call reads, or a page in another tab
// could open its guesses in a dialog while the agent works on the
// secret's site. Withheld when the document is not known.
func (s *session) maskDialog(text, host string) string {
	if host == "" {
		return dialogWithheld
	}
	return s.maskPage(text, host)
}

// dialogWithheld stands for the message of a dialog whose document is not
// known (maskDialog).
const dialogWithheld = "[withheld: the document that opened it is not known]"

// maskPage masks page content as it is read from pages on hosts, for the
// agent (mask.Masker.MaskSource); the record masks it again in full.
func (s *session) maskPage(text string, hosts ...string) string {
	return s.agentMasker(hosts...).MaskSource(text)
}

// stampBlocked notes, on a request being refused, the secrets the binding
// holds then (blockLog.stamp). A request the binding itself refused (a
// page of the secret's site, or a popup it may have written the value
// into) is held for every typed secret.
func (s *session) stampBlocked(b *Blocked) {
	b.Held = s.egress.bound.Holding()
	if b.Rule == ruleSecretBound {
		b.Held = s.egress.bound.Typed()
	}
}

// refusalMask is what masks a refused request's URL for the agent in a
// call's list of refusals, or whether it is withheld (refusalWithheld):
// the secrets considered on the document that made it, as the browser
// named it (Blocked.Docs). Only that, as for an entry of the tab's logs
// (logMask): not the pages the call was on, the current tab's or what
// the URL names, or a page in another tab, or one the agent takes the tab
// from onto the secret's site, could send its guesses where the scope
// refuses them and learn which came back masked. Withheld, with a note
// that reads the same whatever it held: a refusal no document is named
// for (the proxy's, the engine's, a tab the browser made) in a session
// with secrets; one two documents may have made that are not masked for
// the same secrets (the page a frame just replaced, the parent that may
// have loaded a frame); one made while the binding held a secret its
// document is not masked for.
func (s *session) refusalMask(b Blocked) (m *mask.Masker, withheld bool) {
	if len(b.Docs) == 0 {
		if !s.hasSecrets() {
			return s.agentMasker(), false
		}
		return nil, true
	}
	m, withheld = s.docsMasker(b.Docs)
	if withheld {
		return nil, true
	}
	secs := s.considered(b.Docs[0])
	if slices.ContainsFunc(b.Held, func(sec *toolclad.Secret) bool { return !slices.Contains(secs, sec) }) {
		return nil, true
	}
	return m, false
}

// refusalWithheld stands for a refused request's URL and reason the agent
// is not shown (session.refusalMask); its rule and layer are.
const refusalWithheld = "[withheld: it may hold a secret's value, and what sent it is not known to hold that secret]"

package executor

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/browsergate/browsergate/gate"
)

// Who may have started a document load.
//
// A frame's document load is not always its own document's doing. Any
// document of its window group may start it: the frame's parent and every
// ancestor, a sibling frame, the window's opener or a popup it opened
// (window.open(url, name), popup.location, opener.location), or a frame of
// one of those. After a redirect, the server that answered names the next
// URL. The browser does not say which document it was: a request's
// initiator names a script's URL, which the page chooses itself
// (//# sourceURL). So a document load is credited to every document that
// may have started it (loadDocs), and to the server of each redirect; a
// refusal or log entry of it is masked for the secrets of them all when
// they are all masked for the same, and withheld otherwise
// (session.docsMasker), or a page could send its guesses into a window
// of a secret's site and read which one came back masked.

// windowLinks are what tells a page's window group (under targetGuard.mu).
type windowLinks struct {
	// openers: each page of the session that another opened, with that
	// one, when the browser says it can reach its opener (the window
	// group is theirs together).
	openers map[string]string
	// closed: each page of the session's that closed or was let go, and
	// when: its documents may have started a load until gate.LeftGrace
	// after.
	closed map[string]time.Time
	// hops: the host of the last URL of each document request in flight,
	// by the Fetch and the Network id of the request (a redirect's next
	// request names the one before by either), at most maxHops.
	hops map[string]string
	// chose: the documents each document load of a page's main frame in
	// flight is credited to, at most maxHops; urls: each page's URL now,
	// by its target id.
	chose map[pageURL][]string
	urls  map[string]chosenURL
}

const maxHops = 512

// noteOpener takes a page of the session as it attaches: its opener,
// unless the browser says the page cannot reach it (noopener).
func (g *targetGuard) noteOpener(t targetInfo) {
	if t.Type != "page" || t.OpenerID == "" || (t.CanAccessOpener != nil && !*t.CanAccessOpener) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links.openers == nil {
		g.links.openers = map[string]string{}
	}
	g.links.openers[t.TargetID] = t.OpenerID
}

// noteClosed takes a guard session that detached: its page, if it was
// one, closed (or was let go) now.
func (g *targetGuard) noteClosed(m cdpMessage) {
	var e struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Params, &e) != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.pages[e.SessionID]
	if !ok {
		return
	}
	if g.links.closed == nil {
		g.links.closed = map[string]time.Time{}
	}
	g.links.closed[id] = time.Now()
}

// noteHop takes a document request as it is paused (id and network: its
// Fetch and Network ids; redirected: the Fetch id of the request whose
// redirect it is, "" for none) and returns the host of the server that
// named its URL: the URL of the request before it. ok is false for a
// redirect whose request before is not known.
func (g *targetGuard) noteHop(id, network, redirected, url string) (named string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if redirected != "" {
		named, ok = g.links.hops[redirected]
		if !ok && network != "" {
			named, ok = g.links.hops["n:"+network]
		}
	} else {
		ok = true
	}
	if g.links.hops == nil || len(g.links.hops) >= maxHops {
		g.links.hops = map[string]string{}
	}
	g.links.hops[id] = hostOf(url)
	if network != "" {
		g.links.hops["n:"+network] = hostOf(url)
	}
	return named, ok
}

// loadDocs are the hosts of the documents that may have started a
// document load of frame at at: every document of the frame's window
// group (the pages that opened one another, each with all its frames),
// those that closed or were replaced less than gate.LeftGrace before
// included. nil when the frame's page is not one the guard knows, or no
// document of the group has a host yet. g.mu held.
func (g *targetGuard) loadDocs(frame string, at time.Time) []string {
	pages := map[string]bool{}
	for _, id := range g.pages {
		pages[id] = true
	}
	for id := range g.links.closed {
		pages[id] = true
	}
	topOf := func(f string) (string, bool) {
		for depth := 0; depth <= maxEmbedDepth; depth++ {
			p, ok := g.frameParents[f]
			if !ok {
				return f, pages[f]
			}
			f = p
		}
		return "", false
	}
	top, ok := topOf(frame)
	if !ok {
		return nil
	}
	group := g.windowGroup(top)
	var docs []string
	add := func(h string) {
		if h != "" && !slices.Contains(docs, h) {
			docs = append(docs, h)
		}
	}
	for f, u := range g.frames {
		t, ok := topOf(f)
		if !ok || !group[t] {
			continue
		}
		if closed, ok := g.links.closed[t]; ok && at.Sub(closed) >= gate.LeftGrace {
			continue
		}
		add(hostOf(u))
		if r, ok := g.replaced[f]; ok && at.Sub(r.at) < gate.LeftGrace {
			add(r.host)
		}
	}
	return docs
}

// windowGroup is the set of pages linked to page by their openers, either
// way. g.mu held.
func (g *targetGuard) windowGroup(page string) map[string]bool {
	group := map[string]bool{page: true}
	for grew := true; grew; {
		grew = false
		for p, opener := range g.links.openers {
			if group[p] != group[opener] {
				group[p], group[opener], grew = true, true, true
			}
		}
	}
	return group
}

// frameLoaders are the hosts of the documents that may start a document
// load of frame now (loadDocs), for a tab's log.
func (g *targetGuard) frameLoaders(frame cdp.FrameID) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.loadDocs(string(frame), time.Now())
}

// The URL of each page of the session, with the documents that may have
// chosen it: those its document load was credited to (loaderDocs: the
// documents that may have started it, the servers whose redirects named
// it) and the page itself once it moved within its document (a history
// call, a fragment). The agent is shown a page's URL masked for them
// (session.shownURL), not for the site it names.

// chosenURL is a page's URL and who may have chosen it (nil: not known,
// as for a page from the back/forward cache, which no request loaded).
type chosenURL struct {
	url  string
	docs []string
}

// pageURL is a URL a page's main frame (frame) loads.
type pageURL struct{ frame, url string }

// noteChosen takes a document load of a page's main frame (frame: the
// page's target id) as it is paused, with the documents it is credited to.
// Each is known by its frame and URL: a redirect's last request has the
// URL the page commits, and the Fetch domain names no loader.
func (g *targetGuard) noteChosen(frame, url string, docs []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links.chose == nil || len(g.links.chose) >= maxHops {
		g.links.chose = map[pageURL][]string{}
	}
	g.links.chose[pageURL{frame: frame, url: url}] = docs
}

// pageCommitted takes a commit of a page's main frame (frame: the page's
// target id).
func (g *targetGuard) pageCommitted(frame, url string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links.urls == nil {
		g.links.urls = map[string]chosenURL{}
	}
	k := pageURL{frame: frame, url: url}
	g.links.urls[frame] = chosenURL{url: url, docs: g.links.chose[k]}
	delete(g.links.chose, k)
}

// noteWithinDocument takes a page's move within its document
// (Page.navigatedWithinDocument): its own host may have chosen the URL.
func (g *targetGuard) noteWithinDocument(m cdpMessage) {
	var e struct {
		FrameID string `json:"frameId"`
		URL     string `json:"url"`
	}
	if json.Unmarshal(m.Params, &e) != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.links.urls[e.FrameID]
	if !ok {
		return
	}
	p.url = e.URL
	if h := hostOf(g.frames[e.FrameID]); p.docs != nil && h != "" && !slices.Contains(p.docs, h) {
		p.docs = append(slices.Clone(p.docs), h)
	}
	g.links.urls[e.FrameID] = p
}

// chosenBy are the hosts of the documents that may have chosen u as the
// URL of a page of the session's, in each page whose URL it is now. known
// is false when one of those pages does not know who chose it, or none
// has it.
func (g *targetGuard) chosenBy(u string) (docs []string, known bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.links.urls {
		if p.url != u || u == "" {
			continue
		}
		if p.docs == nil {
			return nil, false
		}
		for _, d := range p.docs {
			if !slices.Contains(docs, d) {
				docs = append(docs, d)
			}
		}
	}
	return docs, len(docs) > 0
}

package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/browsergate/browsergate/gate"
)

// Who may have chosen a document's URL.
//
// A frame's document load is not always its own document's doing. Any
// document of its window group may start it: the frame's parent and every
// ancestor, a sibling frame, the window's opener or a popup it opened
// (window.open(url, name), popup.location, opener.location), or a frame of
// one of those. The browser does not say which: a request's initiator
// names a script's URL, which the page chooses itself (//# sourceURL).
// After a redirect, every server of the chain so far named a part of the
// next URL; and a load of a URL the frame loaded before (a history entry
// gone back to, a reload) has the URL its first choosers chose.
//
// So a document load is credited to all of them (loaderDocs): the
// documents of the group now (loadDocs), the servers of its redirects, and
// whoever was credited with an earlier load of the same URL in the same
// frame. A refusal or a log entry of it is masked for their secrets when
// they are all masked for the same, and withheld otherwise
// (session.docsMasker); the URL a frame commits is shown so
// (session.shownURL). Where the guard does not know (a page whose opener
// it does not guard, a redirect whose request before it lost, a frame
// whose earlier loads it forgot), the credit is nil: withheld, or, for a
// URL, masked for its host.

// windowLinks are what tells who may have chosen a URL (under
// targetGuard.mu).
type windowLinks struct {
	// openers: each page of the session that another opened, with that
	// one, when the browser says it can reach its opener (the window
	// group is theirs together); firstOpeners: those it says cannot
	// (noopener): the opener chose the page's first URL only.
	openers, firstOpeners map[string]string
	// closed: each page of the session's that closed, and when: its
	// documents may have started a load until gate.LeftGrace after.
	closed map[string]time.Time
	// hops: each document request in flight, by its Fetch and its
	// Network id (a redirect's next request names the one before by
	// either), the latest maxLinks to 2*maxLinks.
	hops recent[string, hop]
	// seen: for each frame, the URLs it loaded; moved: those it moved to
	// within a document (a fragment, a history call). Apart, so that a
	// page that moves itself often (a map, a feed) never makes the frame
	// forget its loads.
	seen, moved map[string]*urlMemory
	// chose: the credit of each document load in flight, by frame and
	// URL (without fragment), the latest maxLinks to 2*maxLinks; urls:
	// each frame's URL now and who may have chosen it.
	chose recent[loadKey, []string]
	urls  map[string]chosenURL
	// paused: the credit of each document request paused, by its
	// Network id and URL (without fragment), for the tab's log
	// (pausedCredit), the latest maxPaused to 2*maxPaused: a tab's log
	// takes it as it records the tab's next request, or a reply reads it.
	paused recent[pausedKey, []string]
	// loaders: the loader id of each tab's latest commit; reads: the
	// credit of URLs read from a tab's document while it was the guard's
	// latest ("Which document a read of a tab's URL is from", below).
	loaders map[string]string
	reads   recent[readKey, readCredit]
	// origins: the host of the origin of each frame's document (""
	// opaque), which a document of no host of its own (about:blank,
	// srcdoc, blob:) runs under: its creator's.
	origins map[string]string
	// creators: for each page another opened, the hosts the document
	// that opened it may have run as then (the frame's document, and the
	// one it replaced less than gate.LeftGrace before): whose code a
	// document of the page of no host runs (a sandboxed frame's popup),
	// after that document is gone.
	creators map[string][]string
}

// hop is a document request: its URL's host, and its credit (loaderDocs;
// nil: not known).
type hop struct {
	host   string
	credit []string
}

// loadKey is a URL a frame loads, without its fragment.
type loadKey struct{ frame, url string }

// pausedKey is a document request the guard paused: its Network id and
// its URL's hash (without fragment; a redirect's hops share the id).
type pausedKey struct {
	network string
	url     uint64
}

// chosenURL is a frame's URL and who may have chosen it (nil: not known,
// as for a page from the back/forward cache, which no request loaded).
type chosenURL struct {
	url  string
	docs []string
}

const (
	maxLinks  = 512
	maxPaused = 8192
	maxSeen   = 256
)

// recent keeps the latest entries put: from max to 2*max of them (when
// the newer half is full, it becomes the older, and the older is gone).
type recent[K comparable, V any] struct{ cur, old map[K]V }

func (r *recent[K, V]) put(k K, v V, max int) {
	if r.cur == nil || len(r.cur) >= max {
		r.old, r.cur = r.cur, map[K]V{}
	}
	r.cur[k] = v
}

func (r *recent[K, V]) get(k K) (V, bool) {
	if v, ok := r.cur[k]; ok {
		return v, true
	}
	v, ok := r.old[k]
	return v, ok
}

func (r *recent[K, V]) remove(k K) {
	delete(r.cur, k)
	delete(r.old, k)
}

// noteOpener takes a page of the session as it attaches: its opener,
// unless the browser says the page cannot reach it (noopener).
func (g *targetGuard) noteOpener(t targetInfo) {
	if t.Type != "page" || t.OpenerID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links.openers == nil {
		g.links.openers, g.links.firstOpeners = map[string]string{}, map[string]string{}
	}
	if t.CanAccessOpener != nil && !*t.CanAccessOpener {
		g.links.firstOpeners[t.TargetID] = t.OpenerID
		return
	}
	g.links.openers[t.TargetID] = t.OpenerID
}

// noteCreator takes a page that attaches (in the read loop, in order with
// the commits): the hosts its creator, the opener's frame that opened it
// (openerFrameId), may have run as when it did.
func (g *targetGuard) noteCreator(m cdpMessage) {
	var e struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(m.Params, &e) != nil || e.TargetInfo.Type != "page" || e.TargetInfo.OpenerID == "" {
		return
	}
	t := e.TargetInfo
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.links.creators[t.TargetID]; ok {
		return
	}
	creator := cmp.Or(t.OpenerFrameID, t.OpenerID)
	hosts := union(nil, []string{g.runsAs(creator, g.frames[creator])})
	if r, ok := g.replaced[creator]; ok && time.Since(r.at) < gate.LeftGrace {
		hosts = union(hosts, []string{r.host})
	}
	if len(hosts) == 0 {
		return
	}
	if g.links.creators == nil {
		g.links.creators = map[string][]string{}
	}
	g.links.creators[t.TargetID] = hosts
}

// noteClosed takes a guard session that detached: its page, if it was
// one the guard still held, closed now. (A page the guard let go is no
// longer one of its pages: a load of its window group is then credited to
// nothing known.)
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

// loaderDocs are the hosts of the documents and servers that may have
// chosen the URL of a document load of frame that is paused now (id and
// network: its Fetch and Network ids; redirected: the Fetch id of the
// request whose redirect it is, "" for none); nil when one is not known.
// A redirect's next request keeps the whole credit of the one before (the
// documents that started the load, however long its server held the
// redirect), with that one's server.
func (g *targetGuard) loaderDocs(frame, id, network, redirected, url string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	url = withoutFragment(url)
	docs := g.loadCredit(frame, url, time.Now())
	if redirected != "" {
		prev, ok := g.links.hops.get(redirected)
		if !ok && network != "" {
			prev, ok = g.links.hops.get("n:" + network)
		}
		if !ok || prev.credit == nil {
			docs = nil
		} else if docs != nil {
			docs = union(union(docs, prev.credit), []string{prev.host})
		}
	}
	g.noteHop(id, network, hop{host: hostOf(url), credit: docs})
	g.links.seen = remember(g.links.seen, frame, url, docs)
	g.links.chose.put(loadKey{frame, url}, docs, maxLinks)
	if network != "" {
		g.links.paused.put(pausedKey{network, urlHash(url)}, docs, maxPaused)
	}
	return docs
}

// pausedCredit is the credit loaderDocs gave the document request of
// Network id network to url when the guard paused it (nil: not known);
// ok is false when the guard has not paused it (yet), or no longer keeps
// it. The guard takes the tab's commits and pauses on one connection, in
// the order the browser sends them: its credit names every document that
// committed before the request, where a tab's log, on a connection of
// its own, may hear of the request before the guard took a commit.
func (g *targetGuard) pausedCredit(network, url string) (docs []string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.links.paused.get(pausedKey{network, urlHash(withoutFragment(url))})
}

// urlMemory is what a frame remembers of the URLs (without fragment) it
// loaded, or moved to: each with every document credited with it (nil:
// one was not known), at most maxSeen. Past that it forgets them,
// keeping each in a filter (forgot, of at most maxForgot URLs) and the
// credit of them all (dropped, at most maxDropped hosts; droppedUnknown:
// one was not known, or there were more), and past maxForgot only that
// it forgot some (lossy). A URL it forgot is credited to all it dropped:
// every document that may have chosen it is among them. A lossy memory
// cannot tell a URL it forgot from one it never had (recall's maybe).
type urlMemory struct {
	kept           map[string][]string
	forgot         *urlFilter
	dropped        []string
	droppedUnknown bool
	lossy          bool
}

// maxDropped bounds the hosts a memory keeps the credit of what it forgot
// with: past it, what it forgot is not known.
const maxDropped = 256

// remember adds docs to the credit of url in frame's memory in mems
// (once nil, for good), and gives back mems (made when nil).
func remember(mems map[string]*urlMemory, frame, url string, docs []string) map[string]*urlMemory {
	if mems == nil {
		mems = map[string]*urlMemory{}
	}
	m := mems[frame]
	if m == nil {
		m = &urlMemory{}
		mems[frame] = m
	}
	if prev, kept, maybe := m.recall(url); (kept || maybe) && (prev == nil || docs == nil) {
		docs = nil
	} else if kept || maybe {
		docs = union(prev, docs)
	}
	if len(m.kept) >= maxSeen {
		m.forget()
	}
	if m.kept == nil {
		m.kept = map[string][]string{}
	}
	m.kept[url] = docs
	return mems
}

// forget forgets every URL m kept, keeping their credit together and
// each in its filter (past maxForgot URLs: lossy).
func (m *urlMemory) forget() {
	for _, docs := range m.kept {
		if docs == nil {
			m.droppedUnknown = true
		}
		m.dropped = union(m.dropped, docs)
	}
	if len(m.dropped) > maxDropped {
		m.dropped, m.droppedUnknown = nil, true
	}
	if !m.lossy && m.forgot != nil && m.forgot.n+len(m.kept) > maxForgot {
		m.lossy, m.forgot = true, nil
	}
	if !m.lossy {
		if m.forgot == nil {
			m.forgot = &urlFilter{}
		}
		for u := range m.kept {
			m.forgot.add(u)
		}
	}
	m.kept = nil
}

// A urlFilter is a Bloom filter of URLs, keyed (urlSeed): it never
// misses a URL added, and may hold one never added (about 1 in 400 at
// maxForgot/2 URLs, 1 in 40 at maxForgot): a URL it holds is one its
// memory may have forgotten (recall's maybe). A page cannot choose URLs
// that make it hold another.
type urlFilter struct {
	bits [urlFilterBits / 64]uint64
	n    int // URLs added
}

const (
	urlFilterBits = 1 << 20 // 128 KiB
	maxForgot     = 1 << 17
)

// urlSeed keys urlFilter's hash.
var urlSeed = maphash.MakeSeed()

// urlHash is u's 64-bit hash, keyed (urlSeed).
func urlHash(u string) uint64 { return maphash.String(urlSeed, u) }

// spots are the filter's 4 bits for u (two hashes, one 64-bit one's
// halves, combined: Kirsch and Mitzenmacher).
func (f *urlFilter) spots(u string) [4]uint32 {
	h := urlHash(u)
	a, b := uint32(h), uint32(h>>32)|1
	var s [4]uint32
	for i := range s {
		s[i] = (a + uint32(i)*b) % urlFilterBits
	}
	return s
}

func (f *urlFilter) add(u string) {
	for _, i := range f.spots(u) {
		f.bits[i/64] |= 1 << (i % 64)
	}
	f.n++
}

func (f *urlFilter) has(u string) bool {
	if f == nil {
		return false
	}
	for _, i := range f.spots(u) {
		if f.bits[i/64]&(1<<(i%64)) == 0 {
			return false
		}
	}
	return true
}

// recall is url's credit in m (nil: not known): kept, m keeps it;
// maybe, m may have forgotten it (its filter holds it, which it may for a
// URL never added, or m is lossy): its credit is then all m forgot.
func (m *urlMemory) recall(url string) (docs []string, kept, maybe bool) {
	if m == nil {
		return nil, false, false
	}
	if docs, ok := m.kept[url]; ok {
		return docs, true, false
	}
	if !m.lossy && !m.forgot.has(url) {
		return nil, false, false
	}
	if m.droppedUnknown {
		return nil, false, true
	}
	return slices.Clip(m.dropped), false, true
}

// earlier is the credit of frame's earlier loads of url (without
// fragment) and moves to it: had, it loaded or moved to it before;
// known is false when one was not known. A URL the frame may have
// forgotten counts as forgotten when forgotten is true (for a load of it,
// with those that may start it now: every document that may have chosen
// it is among them), else as not known (for a URL no load credits: the
// frame may never have had it).
// g.mu held.
func (g *targetGuard) earlier(frame, url string, forgotten bool) (docs []string, had, known bool) {
	docs = []string{}
	for _, m := range []*urlMemory{g.links.seen[frame], g.links.moved[frame]} {
		prev, kept, maybe := m.recall(url)
		if maybe && !forgotten {
			return nil, true, false
		}
		if (kept || maybe) && prev == nil {
			return nil, true, false
		}
		if kept || maybe {
			docs, had = union(docs, prev), true
		}
	}
	return docs, had, true
}

// loadCredit are the hosts of the documents that may have chosen url for
// a document load of frame at at: those that may have started it
// (loadDocs), and those credited with an earlier load of url in frame,
// or a move to it (earlier); nil when one is not known. g.mu held.
func (g *targetGuard) loadCredit(frame, url string, at time.Time) []string {
	docs := g.loadDocs(frame, at)
	if docs == nil {
		return nil
	}
	prev, _, known := g.earlier(frame, withoutFragment(url), true)
	if !known {
		return nil
	}
	return union(docs, prev)
}

// noteHop keeps a document request in flight by its Fetch and Network
// ids, for the redirect that may follow it. g.mu held.
func (g *targetGuard) noteHop(id, network string, h hop) {
	g.links.hops.put(id, h, maxLinks)
	if network != "" {
		g.links.hops.put("n:"+network, h, maxLinks)
	}
}

// loadDocs are the hosts of the documents that may start a document load
// of frame at at: every document of the frame's window group (the pages
// that opened one another, each with all its frames), those that closed,
// or were replaced in another frame, less than gate.LeftGrace before
// included; none when no document of the group has a host yet (a fresh
// tab: the agent chose its URL). nil when the frame's page, or a page of
// its group, is not one the guard knows. g.mu held.
func (g *targetGuard) loadDocs(frame string, at time.Time) []string {
	return g.loadDocsDepth(frame, at, 0)
}

func (g *targetGuard) loadDocsDepth(frame string, at time.Time, depth int) []string {
	top, ok := g.topOf(frame)
	if !ok || depth > 8 {
		return nil
	}
	group, ok := g.windowGroup(top)
	if !ok {
		return nil // an opener the guard does not hold (the user's tab, a page it let go)
	}
	docs := []string{} // none, as known: the agent chose the URL (a fresh tab)
	for f, u := range g.frames {
		t, ok := g.topOf(f)
		if !ok || !group[t] {
			continue
		}
		if closed, ok := g.links.closed[t]; ok && at.Sub(closed) >= gate.LeftGrace {
			continue
		}
		h := g.runsAs(f, u)
		if h == "" && f == t && (g.links.openers[f] != "" || g.links.firstOpeners[f] != "") {
			// A popup's document of no host (its first, empty one, or one
			// of an opaque origin): its creator's code may run there, after
			// the creator is gone. A noopener page's opener group counts
			// below.
			c, ok := g.links.creators[f]
			if !ok && g.links.firstOpeners[f] == "" {
				return nil
			}
			docs = union(docs, c)
		}
		docs = union(docs, []string{h})
		// A document replaced in another frame may have started the load
		// just before; the one the frame itself replaced may not (a
		// navigation it started there ended with it: a frame has one at a
		// time, and a document that is gone starts none).
		if r, ok := g.replaced[f]; ok && f != frame && at.Sub(r.at) < gate.LeftGrace {
			docs = union(docs, []string{r.host})
		}
	}
	// A page opened without its opener (noopener, target=_blank) was sent
	// to its first URL by the opener: until it has a document of its
	// own, its loads are the opener's group's too.
	if opener, ok := g.links.firstOpeners[top]; ok && g.runsAs(top, g.frames[top]) == "" {
		more := g.loadDocsDepth(opener, at, depth+1)
		if more == nil {
			return nil
		}
		docs = union(docs, more)
	}
	return docs
}

// noteOrigin takes the origin of a frame's document as its main world
// reports it: the only word on the first, empty document of a popup,
// which runs its opener's code and commits nothing.
func (g *targetGuard) noteOrigin(frame, origin string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links.origins == nil {
		g.links.origins = map[string]string{}
	}
	g.links.origins[frame] = originHost(origin)
}

// runsAs is the host a frame's document at u runs as: its URL's; for one
// of no host of its own (about:blank, srcdoc, blob:), its origin's (its
// creator's), else (an opaque one) the frame's that embeds it, which chose
// it. "" for none (an empty page). g.mu held.
func (g *targetGuard) runsAs(frame, u string) string {
	if h := hostOf(u); h != "" {
		return h
	}
	if h := g.links.origins[frame]; h != "" {
		return h
	}
	if parent, ok := g.frameParents[frame]; ok {
		return g.docHost(parent)
	}
	return ""
}

// known reports whether a page is one of the session's the guard holds,
// or held until it closed. g.mu held.
func (g *targetGuard) known(page string) bool {
	if _, ok := g.links.closed[page]; ok {
		return true
	}
	for _, id := range g.pages {
		if id == page {
			return true
		}
	}
	return false
}

// topOf is the page whose frame tree holds frame (a page's main frame has
// the page's id), if the guard knows it. g.mu held.
func (g *targetGuard) topOf(frame string) (string, bool) {
	for depth := 0; depth <= maxEmbedDepth; depth++ {
		p, ok := g.frameParents[frame]
		if !ok {
			return frame, g.known(frame)
		}
		frame = p
	}
	return "", false
}

// windowGroup is the set of pages linked to page by their openers, either
// way (an opener that is a frame counts as its page); ok is false when
// one of them is not a page the guard knows. g.mu held.
func (g *targetGuard) windowGroup(page string) (group map[string]bool, ok bool) {
	group = map[string]bool{page: true}
	for grew := true; grew; {
		grew = false
		for p, opener := range g.links.openers {
			top, known := g.topOf(opener)
			if !known {
				top = opener
			}
			if group[p] != group[top] {
				group[p], group[top], grew = true, true, true
			}
		}
	}
	for p := range group {
		if !g.known(p) {
			return nil, false
		}
	}
	return group, true
}

// frameLoaders are the hosts of the documents that may have chosen url
// for a document load of frame now (loadCredit), for a tab's log. The
// log hears of a new frame on a connection of its own, maybe before the
// guard does: a frame the guard does not know yet, whose parent the log
// names, is taken as that parent's (its first document is its window
// group's choice).
func (g *targetGuard) frameLoaders(frame cdp.FrameID, url string, parent cdp.FrameID) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.frames[string(frame)]; !ok && parent != "" {
		if _, ok := g.frames[string(parent)]; ok {
			g.frameParents[string(frame)] = string(parent)
		}
	}
	return g.loadCredit(string(frame), url, time.Now())
}

// downloadLoaders are the hosts of the documents that may have chosen
// url for a download of frame (which commits nothing): those credited
// with its document load, if one was paused (its redirects' servers
// among them), and those that may start a load of frame now (loadCredit);
// nil when one is not known.
func (g *targetGuard) downloadLoaders(frame, url string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	docs := g.loadCredit(frame, url, time.Now())
	if paused, ok := g.links.chose.get(loadKey{frame, withoutFragment(url)}); ok && docs != nil {
		if paused == nil {
			return nil
		}
		docs = union(docs, paused)
	}
	return docs
}

// urlCommitted takes a frame's commit: its URL is the one its load was
// credited for (loaderDocs); origin is its document's.
func (g *targetGuard) urlCommitted(frame, url, fragment, origin string) {
	g.commitURL(frame, url, fragment, origin, true)
}

// errorPageCommitted takes the commit of the browser's error page for a
// load of url that failed: the frame shows url, credited by that load
// alone (a page may choose the URL of a load that fails; no earlier load
// of it speaks for this one).
func (g *targetGuard) errorPageCommitted(frame, url, origin string) {
	g.commitURL(frame, url, "", origin, false)
}

// commitURL is urlCommitted; restorable: the document may be one the
// browser restored from its back/forward cache, credited by the frame's
// earlier loads of url when no load of it was paused.
func (g *targetGuard) commitURL(frame, url, fragment, origin string, restorable bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links.urls == nil {
		g.links.urls = map[string]chosenURL{}
	}
	if g.links.origins == nil {
		g.links.origins = map[string]string{}
	}
	if h := originHost(origin); h != "" || !strings.HasPrefix(url, "about:") {
		// An about: document the commit names no origin for keeps the
		// one its main world reported (noteOrigin).
		g.links.origins[frame] = h
	}
	k := loadKey{frame, withoutFragment(url)}
	docs, ok := g.links.chose.get(k)
	if ok {
		// A load of it paused before the frame was moved there by a
		// document not known (a load that never committed, then a
		// restore at the move) is not credited by that load alone.
		if _, _, known := g.earlier(frame, k.url, true); !known {
			docs = nil
		}
	} else if prev, had, known := g.earlier(frame, k.url, false); restorable && had && known {
		// No load of it was paused (a page from the back/forward cache):
		// the credit of the frame's earlier loads of it.
		docs = prev
	}
	g.links.urls[frame] = chosenURL{url: url + fragment, docs: docs}
	g.links.chose.remove(k)
}

// noteWithinDocument takes a frame's move within its document
// (Page.navigatedWithinDocument: a history call, a fragment): any
// document of its window group may have chosen the URL now, and a later
// load of it (a reload, a page back from the back/forward cache) keeps
// them all.
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
		// A tab the guard saw no commit of (adopted): who moved it there
		// is not known, and a later load of that URL, or a restore at it,
		// is not credited by its other loads.
		g.links.moved = remember(g.links.moved, e.FrameID, withoutFragment(e.URL), nil)
		return
	}
	p.url = e.URL
	if p.docs != nil {
		if now := g.loadDocs(e.FrameID, time.Now()); now == nil {
			p.docs = nil
		} else {
			p.docs = union(p.docs, now)
		}
	}
	g.links.urls[e.FrameID] = p
	g.links.moved = remember(g.links.moved, e.FrameID, withoutFragment(e.URL), p.docs)
}

// chosenBy are the hosts of the documents that may have chosen u as the
// URL of frame: as its URL now as the guard holds it (chosenIn); none
// (known) for a URL the agent chose in a fresh tab. Only
// frame's own loads count: another frame's load of the same URL (a
// hostile page's guess) says nothing of who chose frame's. With no
// frame, those of every frame whose URL it is now or that loaded it
// before. known is false when one of those does not know who chose it,
// or none has it.
func (g *targetGuard) chosenBy(frame, doc, u string) (docs []string, known bool) {
	if u == "" {
		return nil, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if doc != "" && (!g.hasDoc(frame, doc) || !g.holdsURL(frame, u)) {
		// Read from a document the guard has not taken, or no longer has,
		// or at a URL the guard does not hold for the tab (a move within
		// the document it has not taken, or has since seen pass; a tab it
		// never saw commit): credited as it was when the guard held both,
		// if it did. (The frame's other loads of the URL say nothing of
		// who moved its document there.)
		r, ok := g.links.reads.get(readKey{frame, doc, u})
		return r.docs, ok && r.known
	}
	if frame != "" {
		return g.chosenIn(frame, u)
	}
	docs = []string{}
	for _, p := range g.links.urls {
		if p.url != u {
			continue
		}
		if p.docs == nil {
			return nil, false
		}
		docs, known = union(docs, p.docs), true
	}
	bare := withoutFragment(u)
	for _, mems := range []map[string]*urlMemory{g.links.seen, g.links.moved} {
		for _, m := range mems {
			prev, ok := m.kept[bare]
			if ok && prev == nil {
				return nil, false
			}
			if ok {
				docs, known = union(docs, prev), true
			}
		}
	}
	return docs, known
}

// chosenIn is chosenBy for one frame at its URL now as the guard holds
// it (holdsURL), the fragment aside; any other URL is not known (a move
// the guard has not taken would be credited by the frame's other loads
// of it). Its URL with another fragment is a move within its
// document the guard has not taken yet: credited as it will be
// (noteWithinDocument), to the URL's choosers and its window group now.
// Its URL now, or with another fragment, may also be a load's the guard
// has not seen commit (a server's redirect back to it, with a value in
// its query or fragment), or a page's the browser restores from its
// back/forward cache (which pauses nothing): the credit of the frame's
// loads of it joins, as loaderDocs remembered them when they were
// paused, or all its loads forgot if it may have forgotten it (not its
// moves: an app's view is its own). g.mu held.
func (g *targetGuard) chosenIn(frame, u string) (docs []string, known bool) {
	bare := withoutFragment(u)
	p, ok := g.links.urls[frame]
	if !ok || withoutFragment(p.url) != bare || p.docs == nil {
		return nil, false
	}
	docs = p.docs
	if loads, kept, maybe := g.links.seen[frame].recall(bare); kept || maybe {
		if loads == nil {
			return nil, false
		}
		docs = union(docs, loads)
	}
	if p.url != u {
		now := g.loadDocs(frame, time.Now())
		if now == nil {
			return nil, false
		}
		docs = union(docs, now)
	}
	return docs, true
}

// holds reports whether frame is one of the session's the guard knows
// (with no frame: whether a frame of the session's shows u now or loaded
// it before).
func (g *targetGuard) holds(frame, u string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if frame != "" {
		_, ok := g.frames[frame]
		return ok
	}
	for _, p := range g.links.urls {
		if p.url == u {
			return true
		}
	}
	bare := withoutFragment(u)
	for _, mems := range []map[string]*urlMemory{g.links.seen, g.links.moved} {
		for _, m := range mems {
			if _, ok := m.kept[bare]; ok {
				return true
			}
		}
	}
	return false
}

// union is list with each of more not in it added ("" left out); list's
// own array is never written to.
func union(list, more []string) []string {
	out := list
	for _, h := range more {
		if h != "" && !slices.Contains(out, h) {
			if len(out) == len(list) {
				out = slices.Clone(list)
			}
			out = append(out, h)
		}
	}
	return out
}

// Which document a read of a tab's URL is from.
//
// The state line reads a tab's URL on the tab's own connection; the guard
// takes the tab's commits on its own, maybe later; and the call's texts
// are masked at its end, when the tab may have gone on to another
// document. A URL read from a document the guard has not taken yet (a
// page the browser restored from its back/forward cache, which pauses no
// load; a redirect that just committed), or no longer has, would be
// credited as the guard sees the tab then: another document. So a read
// names its document (the main frame's loader id, PageState.Doc), and the
// URL is credited only while that document is the guard's latest of the
// tab (chosenBy): else it is not known. A page restored from the cache
// keeps the loader id of its first commit: it is the guard's again once
// the guard takes the restore. A read waits a little for the guard to
// take the document it read (settleRead), and the credit its URL had
// then is kept for the masking, when the tab may have left that
// document (a refusal that reset the tab quotes where it was).

// unnamedDoc is the document of a read that could not name it (the
// history or the frame tree did not answer, or named two documents).
const unnamedDoc = "-"

// noteLoader takes the loader id of a tab's commit. g.mu held.
func (g *targetGuard) noteLoader(tab, loader string) {
	if loader == "" {
		return
	}
	if g.links.loaders == nil {
		g.links.loaders = map[string]string{}
	}
	g.links.loaders[tab] = loader
}

// hasDoc reports whether doc is the guard's latest document of tab, or
// the guard knows none of the tab's (one it attached to after its page
// loaded, which it credits as before). g.mu held.
func (g *targetGuard) hasDoc(tab, doc string) bool {
	took, known := g.links.loaders[tab]
	return !known || doc != unnamedDoc && took == doc
}

// holdsURL reports whether u is the guard's URL of tab, but for its
// fragment (a move to another fragment is credited as it will be:
// chosenIn). g.mu held.
func (g *targetGuard) holdsURL(tab, u string) bool {
	p, ok := g.links.urls[tab]
	return ok && withoutFragment(p.url) == withoutFragment(u)
}

// maxReads bounds the reads' credit kept: from maxReads to twice as many,
// the latest (a call masks the reads it made).
const maxReads = 64

// readWait bounds how long a read waits for the guard to take the
// document it read.
const readWait = 250 * time.Millisecond

// readKey is a URL u of tab read from document doc.
type readKey struct{ tab, doc, url string }

// readCredit is the credit of a read's URL while its document was the
// guard's latest of the tab (chosenIn; nil: not known).
type readCredit struct {
	docs  []string
	known bool
}

// settleRead waits until the guard's latest document of tab is doc and
// its URL of tab is u, the URL read, at most readWait (a read of a
// document or URL the guard has no longer, the guard ahead of the read,
// waits it all), and keeps the credit of u as it is then.
func (g *targetGuard) settleRead(ctx context.Context, tab, doc, u string) {
	deadline := time.Now().Add(readWait)
	for {
		g.mu.Lock()
		took, seen := g.links.loaders[tab]
		p, ok := g.links.urls[tab]
		// Kept only for the URL the guard holds for the document: one it
		// has not taken yet (a move within it) would be credited by other
		// loads of that URL. (For a tab the guard saw no commit of: as
		// the guard credits it now, when it holds the URL.)
		held := doc != unnamedDoc && (!seen || took == doc) && ok && p.url == u
		if held {
			docs, known := g.chosenIn(tab, u)
			g.links.reads.put(readKey{tab, doc, u}, readCredit{docs, known}, maxReads)
		}
		g.mu.Unlock()
		if held || !seen || doc == unnamedDoc || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
	}
}

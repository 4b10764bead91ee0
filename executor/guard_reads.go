package executor

import (
	"context"
	"time"
)

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

// settleRead waits until the guard's latest document of tab is doc, at
// most readWait (a read of a document the guard has no longer, the guard
// ahead of the read, waits it all), and keeps the credit of u, the URL
// read, as it is then, when it is the guard's URL of the tab.
func (g *targetGuard) settleRead(ctx context.Context, tab, doc, u string) {
	deadline := time.Now().Add(readWait)
	for {
		g.mu.Lock()
		took, seen := g.links.loaders[tab]
		has := doc != unnamedDoc && took == doc
		if p, ok := g.links.urls[tab]; !seen || has && ok && p.url == u {
			// Kept only for the URL the guard holds for the document: one
			// it has not taken yet (a move within it) would be credited
			// by other loads of that URL. (For a tab the guard saw no
			// commit of: as the guard credits it now.)
			docs, known := g.chosenIn(tab, u)
			g.links.reads.put(readKey{tab, doc, u}, readCredit{docs, known}, maxReads)
		}
		g.mu.Unlock()
		if has || !seen || doc == unnamedDoc || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
	}
}

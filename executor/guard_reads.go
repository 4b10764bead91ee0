package executor

import (
	"context"
	"slices"
	"time"
)

// Which document a read of a tab's URL is from.
//
// The state line reads a tab's URL on the tab's own connection; the guard
// takes the tab's commits on its own, maybe later. A URL read from a
// document the guard has not taken yet (a page the browser restored from
// its back/forward cache, which pauses no load; a redirect that just
// committed) would be credited as the guard sees the tab, the document
// before. So a read names its document (the main frame's loader id), and
// waits for the guard to take it; a URL read from a document the guard
// has not taken by then is not known (chosenIn) until the guard takes
// that document, or a later read of the same URL settles. The document
// must be the one the guard took last in the frame: a page restored from
// the cache keeps the loader id of its first commit. (A read of a
// document older than the guard's latest, the guard ahead of the read,
// is not known either.)

// aheadRead is a URL read from a document (loader) the guard had not
// taken.
type aheadRead struct{ url, loader string }

// maxAhead bounds the reads kept per frame that were ahead of the guard.
const maxAhead = 4

// noteLoader takes the loader id of frame's commit: the reads of that
// document are the guard's to credit now. g.mu held.
func (g *targetGuard) noteLoader(frame, loader string) {
	if loader == "" {
		return
	}
	if g.links.loaders == nil {
		g.links.loaders = map[string]string{}
	}
	g.links.loaders[frame] = loader
	g.dropAhead(frame, func(r aheadRead) bool { return r.loader == loader })
}

// dropAhead forgets frame's reads that drop reports. g.mu held.
func (g *targetGuard) dropAhead(frame string, drop func(aheadRead) bool) {
	if reads := slices.DeleteFunc(g.links.ahead[frame], drop); len(reads) > 0 {
		g.links.ahead[frame] = reads
	} else {
		delete(g.links.ahead, frame)
	}
}

// isAhead reports whether u was read from a document of frame the guard
// had not taken. g.mu held.
func (g *targetGuard) isAhead(frame, u string) bool {
	return slices.ContainsFunc(g.links.ahead[frame], func(r aheadRead) bool { return r.url == u })
}

// readWait bounds how long a read waits for the guard to take the
// document it read.
const readWait = 250 * time.Millisecond

// settleRead waits until the guard's latest commit of frame is of its
// document loader (or it knows none of frame's), at most readWait; past
// that, or when the read could not name its document (loader ""), u, the
// URL read, is not known until the guard takes that document or a later
// read of u settles.
func (g *targetGuard) settleRead(ctx context.Context, frame, loader, u string) {
	deadline := time.Now().Add(readWait)
	for {
		g.mu.Lock()
		took, known := g.links.loaders[frame]
		if !known || loader != "" && took == loader {
			g.dropAhead(frame, func(r aheadRead) bool { return r.url == u })
			g.mu.Unlock()
			return
		}
		if loader == "" || time.Now().After(deadline) || ctx.Err() != nil {
			if g.links.ahead == nil {
				g.links.ahead = map[string][]aheadRead{}
			}
			reads := append(g.links.ahead[frame], aheadRead{url: u, loader: loader})
			g.links.ahead[frame] = reads[max(0, len(reads)-maxAhead):]
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
	}
}

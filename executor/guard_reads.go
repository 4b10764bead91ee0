package executor

import (
	"context"
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
// has not taken by then is not known (chosenIn) until the guard takes a
// commit of that frame. The document must be the one the guard took last
// in the frame: a page restored from the cache keeps the loader id of its
// first commit. (A read of a document older than the guard's latest, the
// guard ahead of the read, is not known either: the next read is.)

// noteLoader takes the loader id of frame's commit. g.mu held.
func (g *targetGuard) noteLoader(frame, loader string) {
	if loader == "" {
		return
	}
	if g.links.loaders == nil {
		g.links.loaders = map[string]string{}
	}
	g.links.loaders[frame] = loader
	delete(g.links.ahead, frame)
}

// readWait bounds how long a read waits for the guard to take the
// document it read.
const readWait = 250 * time.Millisecond

// settleRead waits until the guard's latest commit of frame is of its
// document loader (or it knows none of frame's), at most readWait; past
// that, or when the read could not name its document (loader ""), u, the
// URL read, is not known until the guard takes a commit of frame or a
// later read of frame settles.
func (g *targetGuard) settleRead(ctx context.Context, frame, loader, u string) {
	deadline := time.Now().Add(readWait)
	for {
		g.mu.Lock()
		took, known := g.links.loaders[frame]
		if !known || loader != "" && took == loader {
			delete(g.links.ahead, frame)
			g.mu.Unlock()
			return
		}
		if loader == "" || time.Now().After(deadline) || ctx.Err() != nil {
			if g.links.ahead == nil {
				g.links.ahead = map[string]string{}
			}
			g.links.ahead[frame] = u
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

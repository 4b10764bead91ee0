package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/toolclad"
)

// runtimeEvent reads, in the read loop, the Runtime events the guard
// enabled Runtime for: the permission binding's calls and the execution
// contexts they come from. Every other Runtime event (a page that logs to
// the console in a loop, an exception) is dropped here, before any
// goroutine starts for it.
//
// A report is attributed to the frame whose main world called the
// binding (the context's frame, as the browser said when it made the
// context), at that frame's URL as the browser last reported it
// committed; both are read in order with the commits, so a report is
// never taken for the next document's. Whether a grant to that URL's
// origin reaches the frame is the browser's word too (askingFrame). A
// report from a context the guard does not know (another world's, one
// already gone) reaches permissionAsked with no URL: recorded as refused,
// never as granted.
// Each document's reports of one permission make one record
// (firstReports).
func (g *targetGuard) runtimeEvent(m cdpMessage) {
	switch m.Method {
	case "Runtime.executionContextCreated":
		var e struct {
			Context struct {
				ID      int64  `json:"id"`
				Origin  string `json:"origin"`
				AuxData struct {
					IsDefault bool   `json:"isDefault"`
					FrameID   string `json:"frameId"`
				} `json:"auxData"`
			} `json:"context"`
		}
		if json.Unmarshal(m.Params, &e) != nil || !e.Context.AuxData.IsDefault || e.Context.AuxData.FrameID == "" {
			return
		}
		if g.contexts[m.SessionID] == nil {
			g.contexts[m.SessionID] = map[int64]reportingContext{}
		}
		g.contexts[m.SessionID][e.Context.ID] = reportingContext{frame: e.Context.AuxData.FrameID, origin: e.Context.Origin}
		g.noteOrigin(e.Context.AuxData.FrameID, e.Context.Origin) // a popup's first, empty document commits nothing
	case "Runtime.executionContextDestroyed":
		var e struct {
			ID int64 `json:"executionContextId"`
		}
		if json.Unmarshal(m.Params, &e) == nil {
			delete(g.contexts[m.SessionID], e.ID)
			g.forgetReports(m.SessionID, e.ID)
		}
	case "Runtime.executionContextsCleared":
		for id := range g.contexts[m.SessionID] {
			g.forgetReports(m.SessionID, id)
		}
		delete(g.contexts, m.SessionID)
	case "Runtime.bindingCalled":
		var e struct {
			Name      string `json:"name"`
			Payload   string `json:"payload"`
			ContextID int64  `json:"executionContextId"`
		}
		if json.Unmarshal(m.Params, &e) != nil || e.Name != permissionBinding || g.permissionAsked == nil {
			return
		}
		var from askingFrame
		if c, known := g.contexts[m.SessionID][e.ContextID]; known {
			from = g.askingFrame(c)
		} else {
			e.ContextID = unknownContext
		}
		payload, ok := g.firstReports(m.SessionID, e.ContextID, e.Payload)
		if !ok {
			return
		}
		// Recording may wait on the session's log; the read loop does not.
		go g.permissionAsked(payload, from)
	}
}

// reportingContext is a main-world execution context a permission report
// can come from: its frame, and its origin as the browser serialises it
// (Runtime.executionContextCreated), "://" for an opaque one.
type reportingContext struct{ frame, origin string }

// maxEmbedDepth bounds the walk from a frame up to its page: deeper than
// any page nests its frames, and a loop in what the guard was told ends.
const maxEmbedDepth = 64

// askingFrame is the frame of context c as the browser reported it: the
// URL of its document, and whether a grant to that URL's origin reaches
// it. Browser.setPermission grants an origin to a page of that origin
// at the top level; the browser refuses the request from a frame of the
// origin embedded by another origin's page (with or without an allow
// attribute), and from a sandboxed document, whose origin is opaque
// whatever its URL (and whatever the Permissions API says there). So a
// grant is recorded only for a context whose own origin is its URL's,
// in a frame that is its page's main frame or is embedded, frame by
// frame up to that main frame, by documents of the same origin. Anything
// else, or anything the guard does not know on the way up, is Unapplied:
// recorded as refused.
func (g *targetGuard) askingFrame(c reportingContext) askingFrame {
	g.mu.Lock()
	defer g.mu.Unlock()
	url, known := g.frames[c.frame]
	if !known || url == "" {
		return askingFrame{}
	}
	from := askingFrame{URL: url}
	origin := pageOrigin(url)
	switch {
	case origin == "":
		return from // no web origin: no grant names it
	case pageOrigin(c.origin) == "":
		// Chromium 156 gives a sandboxed document's context the origin
		// "://" (an opaque origin has no serialisation of its own).
		from.Unapplied = "the document that asked is sandboxed (an opaque origin), and the browser applies no grant to it"
		return from
	case c.origin != origin:
		from.Unapplied = fmt.Sprintf("the document that asked has the origin %s, not its URL's, and the browser applies the grant only to the granted origin", pagetext.Value(c.origin))
		return from
	}
	frame := c.frame
	for depth := 0; !g.isMainFrame(frame); depth++ {
		parent, ok := g.frameParents[frame]
		if !ok || depth >= maxEmbedDepth {
			from.Unapplied = "browsergate does not know which page embeds the frame that asked (recorded as refused)"
			return from
		}
		if embedder := g.frames[parent]; pageOrigin(embedder) != origin {
			from.Unapplied = fmt.Sprintf("the browser applies the grant only to a top-level page of that origin (and its frames of the same origin): this frame was embedded by %s",
				pagetext.Value(cmp.Or(pageOrigin(embedder), embedder, "a frame of no URL")))
			return from
		}
		frame = parent
	}
	return from
}

// isMainFrame reports whether frame is the main frame of one of the
// session's page targets (which has the target's id). g.mu must be held.
func (g *targetGuard) isMainFrame(frame string) bool {
	for _, id := range g.pages {
		if id == frame {
			return true
		}
	}
	return false
}

// frameEmbedded takes the frame that embeds a frame of the session's
// ("" for none: nothing is noted, so a page's main frame is told by its
// target, never by a missing parent).
func (g *targetGuard) frameEmbedded(frame, parent string) {
	if frame == "" || parent == "" {
		return
	}
	g.mu.Lock()
	g.frameParents[frame] = parent
	g.mu.Unlock()
}

// unknownContext stands for every context the guard does not know, in
// reportKey: their reports share one record per permission.
const unknownContext = -1

// reportKey is one permission reported by one document (its main
// world's execution context) of one guard session.
type reportKey struct {
	session string
	context int64
	name    string
}

// firstReports is payload ("name[,name] url") with only the permissions
// its document has not reported before: a page that asks again and again
// (or calls the binding in a loop) makes one record of each, so its
// reports cannot crowd the session's other refusals (its egress) out of
// the evidence's bounded list. false when nothing is left to record.
// Names that are no permission are dropped here, so they cannot make
// reports of their own.
func (g *targetGuard) firstReports(session string, context int64, payload string) (string, bool) {
	if len(payload) > maxPermissionReport {
		payload = payload[:maxPermissionReport]
	}
	names, url, _ := strings.Cut(payload, " ")
	var fresh []string
	for _, name := range strings.Split(names, ",") {
		if !slices.Contains(toolclad.PermissionNames, name) && !slices.Contains(deviceChoosers, name) {
			continue
		}
		k := reportKey{session, context, name}
		if g.reported[k] {
			continue
		}
		g.reported[k] = true
		fresh = append(fresh, name)
	}
	if len(fresh) == 0 {
		return "", false
	}
	return strings.Join(fresh, ",") + " " + url, true
}

// forgetReports forgets what a document that is gone reported.
func (g *targetGuard) forgetReports(session string, context int64) {
	for k := range g.reported {
		if k.session == session && k.context == context {
			delete(g.reported, k)
		}
	}
}

// noteRestore reloads, in the user's context, a page of the session's
// whose main frame the back/forward cache restored to a document from
// before the guard held the page (a user's tab adopted, with its
// history): that document was loaded without browsergate's
// Permissions-Policy and page scripts, and the reload loads it again
// through the guard. A document that committed while the guard held its
// page has them already. (The restored document runs until the reload
// replaces it.)
func (g *targetGuard) noteRestore(m cdpMessage) {
	var e struct {
		Frame struct {
			ParentID string `json:"parentId"`
			LoaderID string `json:"loaderId"`
		} `json:"frame"`
		Type string `json:"type"`
	}
	if !g.user || json.Unmarshal(m.Params, &e) != nil || e.Frame.ParentID != "" || e.Frame.LoaderID == "" {
		return
	}
	if e.Type != "BackForwardCacheRestore" {
		g.loads[e.Frame.LoaderID] = true
		return
	}
	if g.loads[e.Frame.LoaderID] {
		return
	}
	go func() {
		if _, err := g.call(context.Background(), m.SessionID, "Page.reload", map[string]any{}); err != nil {
			g.logger.Warn("target guard: reloading a page the back/forward cache restored from before the guard", "error", err)
		}
	}()
}

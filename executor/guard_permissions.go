package executor

import (
	"encoding/json"
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
// never taken for the next document's. A report from a context the guard
// does not know (another world's, one already gone) reaches
// permissionAsked with no URL: recorded as refused, never as granted.
func (g *targetGuard) runtimeEvent(m cdpMessage) {
	switch m.Method {
	case "Runtime.executionContextCreated":
		var e struct {
			Context struct {
				ID      int64 `json:"id"`
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
			g.contexts[m.SessionID] = map[int64]string{}
		}
		g.contexts[m.SessionID][e.Context.ID] = e.Context.AuxData.FrameID
	case "Runtime.executionContextDestroyed":
		var e struct {
			ID int64 `json:"executionContextId"`
		}
		if json.Unmarshal(m.Params, &e) == nil {
			delete(g.contexts[m.SessionID], e.ID)
		}
	case "Runtime.executionContextsCleared":
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
		url := ""
		if frame, ok := g.contexts[m.SessionID][e.ContextID]; ok {
			g.mu.Lock()
			url = g.frames[frame]
			g.mu.Unlock()
		}
		// Recording may wait on the session's log; the read loop does not.
		go g.permissionAsked(e.Payload, url)
	}
}

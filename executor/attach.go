package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// targetGuard intercepts every target of one live session — its tab, and
// each iframe, worker and popup that target makes — on a DevTools
// connection of its own. chromedp drives one session per context and drops
// the messages of sessions it did not open, so the guard speaks the
// protocol itself: it attaches to the session's tab, sets auto-attach with
// waitForDebuggerOnStart (so a new child target is paused before its first
// request), enables Fetch and removes WebRTC on each child, and only then
// lets it run. Popups and service or shared workers are top-level targets:
// they are attached as soon as they appear in the session's browser
// context, not paused (their first requests are stopped by the session's
// egress proxy).
type targetGuard struct {
	conn    *websocket.Conn
	context string // browser context id
	ic      *interceptor
	logger  *slog.Logger

	writeMu sync.Mutex
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpReply
	guarded map[string]bool // target ids already attached
	done    chan struct{}
}

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type cdpReply struct {
	result json.RawMessage
	err    error
}

type targetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	URL              string `json:"url"`
	OpenerID         string `json:"openerId"`
	BrowserContextID string `json:"browserContextId"`
}

// guardTargets connects to the browser at wsURL and guards the tab and
// every target that descends from it or opens in browserContext.
func guardTargets(ctx context.Context, wsURL, browserContext, tab string, ic *interceptor, logger *slog.Logger) (*targetGuard, error) {
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, _, err := dialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", wsURL, err)
	}
	conn.SetReadLimit(64 << 20)
	g := &targetGuard{conn: conn, context: browserContext, ic: ic, logger: logger,
		pending: map[int64]chan cdpReply{}, guarded: map[string]bool{}, done: make(chan struct{})}
	go g.read()
	if _, err := g.call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.attach(ctx, tab, "page"); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Close drops the guard's connection (its sessions detach; nothing stays
// paused on it).
func (g *targetGuard) Close() { g.conn.Close() }

func (g *targetGuard) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.nextID++
	id := g.nextID
	ch := make(chan cdpReply, 1)
	g.pending[id] = ch
	g.mu.Unlock()
	g.writeMu.Lock()
	err = g.conn.WriteJSON(cdpMessage{ID: id, Method: method, Params: raw, SessionID: session})
	g.writeMu.Unlock()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case r := <-ch:
		return r.result, r.err
	case <-g.done:
		return nil, errors.New("devtools connection closed")
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (g *targetGuard) read() {
	defer close(g.done)
	for {
		var m cdpMessage
		if err := g.conn.ReadJSON(&m); err != nil {
			return
		}
		if m.ID != 0 {
			g.mu.Lock()
			ch := g.pending[m.ID]
			delete(g.pending, m.ID)
			g.mu.Unlock()
			if ch != nil {
				var err error
				if m.Error != nil {
					err = errors.New(m.Error.Message)
				}
				ch <- cdpReply{result: m.Result, err: err}
			}
			continue
		}
		go g.event(m) // never block the read loop: handlers call back
	}
}

func (g *targetGuard) event(m cdpMessage) {
	ctx := context.Background()

	switch m.Method {
	case "Fetch.requestPaused":
		var e struct {
			RequestID string `json:"requestId"`
			Request   struct {
				URL         string `json:"url"`
				URLFragment string `json:"urlFragment"`
			} `json:"request"`
		}
		if json.Unmarshal(m.Params, &e) != nil {
			return
		}
		url := e.Request.URL + e.Request.URLFragment
		v := g.ic.decide(url)
		if v.Allowed {
			g.answer(ctx, m.SessionID, "Fetch.continueRequest", map[string]any{"requestId": e.RequestID}, url)
			return
		}
		if g.answer(ctx, m.SessionID, "Fetch.failRequest", map[string]any{"requestId": e.RequestID, "errorReason": "BlockedByClient"}, url) {
			g.ic.log.add(Blocked{Time: time.Now(), URL: url, Rule: v.Rule, Reason: v.Reason, Layer: "interception"})
		}
	case "Target.attachedToTarget":
		var e struct {
			SessionID  string     `json:"sessionId"`
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &e) == nil {
			g.mu.Lock()
			g.guarded[e.TargetInfo.TargetID] = true
			g.mu.Unlock()
			if err := g.prepare(ctx, e.SessionID, e.TargetInfo.Type); err != nil {
				g.logger.Warn("target guard: a child target could not be guarded; it stays paused",
					"target", e.TargetInfo.TargetID, "type", e.TargetInfo.Type, "error", err)
			}
		}
	case "Target.targetCreated", "Target.targetInfoChanged":
		var e struct {
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &e) != nil || e.TargetInfo.BrowserContextID != g.context {
			return
		}
		switch e.TargetInfo.Type {
		case "page", "service_worker", "shared_worker":
			// A popup, or a worker the session's pages registered: top-level
			// targets of the session's browser context.
			if err := g.attach(ctx, e.TargetInfo.TargetID, e.TargetInfo.Type); err != nil {
				g.logger.Warn("target guard: cannot attach", "target", e.TargetInfo.TargetID, "type", e.TargetInfo.Type, "error", err)
			}
		}
	}
}

func (g *targetGuard) answer(ctx context.Context, session, method string, params map[string]any, url string) bool {
	if _, err := g.call(ctx, session, method, params); err != nil {
		g.logger.Warn("target guard: answering a paused request failed", "url", url, "method", method, "error", err)
		return false
	}
	return true
}

// attach guards a top-level target of the session (its tab, a popup, a
// service or shared worker).
func (g *targetGuard) attach(ctx context.Context, targetID, kind string) error {
	g.mu.Lock()
	seen := g.guarded[targetID]
	g.guarded[targetID] = true
	g.mu.Unlock()
	if seen {
		return nil
	}
	res, err := g.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return fmt.Errorf("attach to %s: %w", targetID, err)
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	return g.prepare(ctx, r.SessionID, kind)
}

// prepare enables interception on one target session, removes WebRTC from
// its documents, makes its own children pause at start, and lets it run.
func (g *targetGuard) prepare(ctx context.Context, session, kind string) error {
	steps := []struct {
		method string
		params any
	}{
		{"Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}}},
	}
	if kind == "page" || kind == "iframe" {
		// The script is registered with the Page domain, which must be on.
		steps = append(steps, struct {
			method string
			params any
		}{"Page.enable", map[string]any{}}, struct {
			method string
			params any
		}{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": noWebRTCJS, "runImmediately": true}})
	}
	if !strings.Contains(kind, "worker") {
		steps = append(steps, struct {
			method string
			params any
		}{"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}})
	}
	for i, s := range steps {
		if _, err := g.call(ctx, session, s.method, s.params); err != nil {
			if i == 0 && strings.Contains(kind, "worker") {
				// Not every worker kind speaks Fetch; its traffic still
				// goes through the session's egress proxy.
				g.logger.Debug("target guard: no Fetch on a worker", "type", kind, "error", err)
				continue
			}
			return fmt.Errorf("%s: %w", s.method, err)
		}
	}
	_, err := g.call(ctx, session, "Runtime.runIfWaitingForDebugger", map[string]any{})
	return err
}

package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
)

// In the user's own browser context no egress proxy stands between a
// session's pages and the network, and Chromium's network predictor opens
// TCP connections to the hosts a page names — <link rel=preconnect>, a
// Link header, the target of a navigation about to start (meta refresh,
// script, link, form, iframe) — before any request exists, so request
// interception never sees them, and no DevTools mechanism or switch found
// stops them. The browser's own "Preload pages" setting off
// (chrome://settings/performance: the profile preference
// net.network_prediction_options = 2) switches the predictor off, and with
// it every such connection (TestLivePreconnects). The browser says whether
// it is off through the DevTools Preload domain (disabledByPreference), as
// the setting stands for its profile at that moment.

// PreloadingOnFigure is what a session's pages made a browser with
// "Preload pages" on do, through the real binary in the user's context:
// TCP connections to a forbidden address without any request.
const PreloadingOnFigure = "measured on Chromium 156: 8-10 TCP connections to a forbidden address in 5-7 of 11 cases, " +
	"over 4 runs of TestLivePreconnects' control"

// ErrPreloading is returned when the browser could not be asked whether
// its "Preload pages" setting is off.
var ErrPreloading = errors.New("could not ask the browser whether preloading is off")

// LivePreloadingOff asks the browser at a live endpoint (as live_endpoint
// names it: an http:// or ws:// URL on this machine's loopback, or a
// DevToolsActivePort file) whether preloading is off in its own browser
// context, where context = "user" sessions work. It opens a hidden blank
// target there (never shown in the tab strip, closed before it returns, and
// with the connection should it not be), reads the Preload domain's
// preloadEnabledStateUpdated on it, and attaches to nothing else.
func LivePreloadingOff(endpoint string, timeout time.Duration) (bool, error) {
	ws, err := resolveLiveEndpoint(endpoint, timeout)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrPreloading, err)
	}
	return preloadingOff(ws, timeout)
}

// warnPreloading logs a warning, at attach, when the user's browser has
// "Preload pages" on, or does not say.
func (b *backend) warnPreloading(ws string) {
	off, err := preloadingOff(ws, b.startup)
	switch {
	case err != nil:
		b.logger.Warn("could not tell whether \"Preload pages\" is off in the user's browser: where it is on, the session's pages make it open TCP connections to hosts outside the scope without any request; turn it off at chrome://settings/performance",
			"endpoint", b.key.endpoint, "error", err, "measured", PreloadingOnFigure)
	case !off:
		b.logger.Warn("\"Preload pages\" is on in the user's browser: the session's pages make it open TCP connections to hosts outside the scope without any request; turn it off at chrome://settings/performance",
			"endpoint", b.key.endpoint, "measured", PreloadingOnFigure)
	}
}

// preloadingOff is LivePreloadingOff on a resolved DevTools WebSocket.
func preloadingOff(ws string, timeout time.Duration) (bool, error) {
	if ap, ok := devtoolsAddr(ws); !ok || !ap.Addr().IsLoopback() {
		return false, fmt.Errorf("%w: %s is not on this machine's loopback", ErrPreloading, ws)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dialer := websocket.Dialer{HandshakeTimeout: timeout}
	conn, _, err := dialer.DialContext(ctx, ws, nil)
	if err != nil {
		return false, fmt.Errorf("%w: connect to %s: %v", ErrPreloading, ws, err)
	}
	defer conn.Close()
	conn.SetReadLimit(16 << 20)
	p := newPlainCDP(ctx, conn)
	var created struct {
		TargetID string `json:"targetId"`
	}
	// hidden needs background; the target lives no longer than this
	// connection.
	if err := p.call("", "Target.createTarget", map[string]any{"url": "about:blank", "hidden": true, "background": true}, &created); err != nil {
		return false, fmt.Errorf("%w: %v", ErrPreloading, err)
	}
	defer p.call("", "Target.closeTarget", map[string]any{"targetId": created.TargetID}, nil)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := p.call("", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached); err != nil {
		return false, fmt.Errorf("%w: %v", ErrPreloading, err)
	}
	// The browser sends the state as the domain is enabled, before it
	// answers: the answer waits for the target's renderer, which in a
	// browser that has just started took longer than 5 s (a hidden
	// target's first), so only the event is awaited (or an error answer).
	state, err := p.sendFor(attached.SessionID, "Preload.enable", "Preload.preloadEnabledStateUpdated")
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrPreloading, err)
	}
	var st struct {
		DisabledByPreference *bool `json:"disabledByPreference"`
	}
	if err := json.Unmarshal(state, &st); err != nil || st.DisabledByPreference == nil {
		return false, fmt.Errorf("%w: the browser's preloadEnabledStateUpdated has no disabledByPreference: %s", ErrPreloading, state)
	}
	return *st.DisabledByPreference, nil
}

// plainCDP is a DevTools connection used by one caller, one command at a
// time; what it reads arrives on msgs until the connection ends or ctx
// does, and what a caller does not wait for is dropped.
type plainCDP struct {
	ctx  context.Context
	conn *websocket.Conn
	id   int64
	msgs chan cdpMessage
	err  error // why msgs was closed
}

func newPlainCDP(ctx context.Context, conn *websocket.Conn) *plainCDP {
	p := &plainCDP{ctx: ctx, conn: conn, msgs: make(chan cdpMessage, 64)}
	go func() {
		defer close(p.msgs)
		for {
			var m cdpMessage
			if err := conn.ReadJSON(&m); err != nil {
				p.err = err
				return
			}
			select {
			case p.msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		<-ctx.Done()
		conn.Close() // ends the reader
	}()
	return p
}

// next is the next message read, or why there is none.
func (p *plainCDP) next() (cdpMessage, error) {
	select {
	case m, ok := <-p.msgs:
		if !ok {
			if p.ctx.Err() != nil {
				return m, p.ctx.Err()
			}
			return m, fmt.Errorf("connection lost: %v", p.err)
		}
		return m, nil
	case <-p.ctx.Done():
		return cdpMessage{}, p.ctx.Err()
	}
}

// send writes a command (params nil: none) and returns its id.
func (p *plainCDP) send(session, method string, params any) (int64, error) {
	p.id++
	if params == nil {
		params = map[string]any{}
	}
	msg := map[string]any{"id": p.id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	p.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := p.conn.WriteJSON(msg); err != nil {
		return 0, fmt.Errorf("%s: %w", method, err)
	}
	return p.id, nil
}

// call sends a command and decodes its result into result (nil:
// dropped).
func (p *plainCDP) call(session, method string, params, result any) error {
	id, err := p.send(session, method, params)
	if err != nil {
		return err
	}
	for {
		m, err := p.next()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", method, err)
		case m.ID == id && m.Error != nil:
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		case m.ID == id && result != nil && len(m.Result) > 0:
			return json.Unmarshal(m.Result, result)
		case m.ID == id:
			return nil
		}
	}
}

// sendFor sends a command without parameters and returns the parameters
// of the session's event it awaits, whether the command has answered or
// not; an error answer ends the wait.
func (p *plainCDP) sendFor(session, method, event string) (json.RawMessage, error) {
	id, err := p.send(session, method, nil)
	if err != nil {
		return nil, err
	}
	for {
		m, err := p.next()
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s, awaiting %s: %w", method, event, err)
		case m.ID == id && m.Error != nil:
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		case m.Method == event && m.SessionID == session:
			return m.Params, nil
		}
	}
}

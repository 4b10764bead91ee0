package executor

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/scope/egress"
)

// The conformance probe runs before a browser on a pool host serves any
// session. Everything that holds a remote session's pages rests on three
// things the daemon cannot see from its side: that a browser context made
// with a proxy sends its requests there (the gate), that a new target
// waits at start until its guard lets it run (or its first requests would
// go unintercepted), and that the endpoint is the Chromium it claims to
// be. Each is tried on a throwaway browser context; a browser that fails
// any of them serves no session, and the session is refused saying which.

// ErrProbe is the error of a pool browser that failed the conformance
// probe.
var ErrProbe = errors.New("the pool's browser failed the conformance probe")

// probeWait bounds each step of the probe.
const probeWait = 10 * time.Second

// probePool runs the conformance probe on the browser at ws, with gate as
// the throwaway context's proxy; header is what the connection sends.
func probePool(ws string, header http.Header, gate *egress.Gateway) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*probeWait)
	defer cancel()
	c, err := dialProbe(ctx, ws, header)
	if err != nil {
		return fmt.Errorf("%w: connect to %s: %v", ErrProbe, ws, err)
	}
	defer c.close()

	// The browser it claims to be: a Chromium, and the endpoint is the
	// browser's, not a page's or a worker's (a forwarder that points a
	// browser's URL at one). Which browser the URL names cannot be told:
	// Chromium 156 answers Target.getTargetInfo on its browser endpoint
	// with an id of the connection's own, never the one in the URL
	// (measured: /devtools/browser/a5e3… answered e539… on one
	// connection, 9a54… on the next), and a Grid's se:cdp names its
	// WebDriver session.
	var version struct{ Product, ProtocolVersion string }
	if err := c.call(ctx, "", "Browser.getVersion", nil, &version); err != nil {
		return fmt.Errorf("%w: Browser.getVersion: %v", ErrProbe, err)
	}
	if !strings.HasPrefix(version.Product, "Chrome/") && !strings.HasPrefix(version.Product, "HeadlessChrome/") {
		return fmt.Errorf("%w: it is %q, not a Chromium browser", ErrProbe, version.Product)
	}
	var self struct {
		TargetInfo struct{ TargetID, Type string }
	}
	if err := c.call(ctx, "", "Target.getTargetInfo", nil, &self); err != nil {
		return fmt.Errorf("%w: Target.getTargetInfo: %v", ErrProbe, err)
	}
	if self.TargetInfo.Type != "browser" {
		return fmt.Errorf("%w: the endpoint %s answers for a %s target (%s), not for a browser", ErrProbe, ws, self.TargetInfo.Type, self.TargetInfo.TargetID)
	}

	// A throwaway context with the gate as its proxy, and a target in it
	// that must wait at start.
	var bc struct{ BrowserContextID string }
	if err := c.call(ctx, "", "Target.createBrowserContext", map[string]any{"proxyServer": "http://" + gate.Addr(), "proxyBypassList": proxyBypass, "disposeOnDetach": true}, &bc); err != nil {
		return fmt.Errorf("%w: make a browser context with a proxy of its own: %v", ErrProbe, err)
	}
	defer c.call(context.Background(), "", "Target.disposeBrowserContext", map[string]any{"browserContextId": bc.BrowserContextID}, nil)
	if err := c.call(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil); err != nil {
		return fmt.Errorf("%w: Target.setAutoAttach: %v", ErrProbe, err)
	}
	var created struct{ TargetID string }
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": bc.BrowserContextID}, &created); err != nil {
		return fmt.Errorf("%w: open a tab in the context: %v", ErrProbe, err)
	}
	att, err := c.attached(ctx, created.TargetID)
	if err != nil {
		return fmt.Errorf("%w: the new tab was not attached: %v", ErrProbe, err)
	}
	if !att.WaitingForDebugger {
		return fmt.Errorf("%w: a new tab does not wait at start for its guard (waitForDebuggerOnStart is not honoured): its first requests would go unintercepted", ErrProbe)
	}
	if err := c.call(ctx, att.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil); err != nil {
		return fmt.Errorf("%w: let the tab run: %v", ErrProbe, err)
	}

	// The context's proxy honoured: a name only the gate is asked about,
	// then a loopback address (a context's proxy applies to loopback only
	// with the bypass rule the session's context is made with; a browser
	// that sent it around the proxy would reach the pool host's own
	// DevTools).
	host := "probe-" + strings.ToLower(rand.Text()) + ".browsergate.invalid"
	if err := c.expectAtGate(att.SessionID, gate, host, "http://"+host+"/"); err != nil {
		return fmt.Errorf("%w: a page of a browser context made with the gate as its proxy did not ask the gate for a name (the per-context proxy is not honoured): its requests would go around the gate", ErrProbe)
	}
	var b [3]byte
	rand.Read(b[:])
	lo := fmt.Sprintf("127.%d.%d.%d", b[0], b[1], b[2]|1)
	if err := c.expectAtGate(att.SessionID, gate, lo, "http://"+lo+"/"); err != nil {
		return fmt.Errorf("%w: a page of a browser context made with the gate as its proxy sent a loopback request around it (%s): it could reach the pool host's own DevTools", ErrProbe, lo)
	}
	return nil
}

// expectAtGate navigates the probe's tab to url and waits for the gate to
// be asked for host.
func (c *probeConn) expectAtGate(session string, gate *egress.Gateway, host, url string) error {
	seen, stop := gate.Expect(host)
	defer stop()
	c.send(session, "Page.navigate", map[string]any{"url": url})
	select {
	case <-seen:
		return nil
	case <-time.After(probeWait):
		return errors.New("not seen")
	}
}

// probeConn is the probe's own DevTools connection.
type probeConn struct {
	conn    *websocket.Conn
	mu      sync.Mutex
	next    int64
	pending map[int64]chan probeReply
	events  chan probeEvent
	done    chan struct{}
}

type probeReply struct {
	result json.RawMessage
	err    error
}

type probeEvent struct {
	method string
	params json.RawMessage
}

func dialProbe(ctx context.Context, ws string, header http.Header) (*probeConn, error) {
	d := websocket.Dialer{HandshakeTimeout: probeWait, Proxy: nil}
	conn, _, err := d.DialContext(ctx, ws, header)
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(16 << 20)
	c := &probeConn{conn: conn, pending: map[int64]chan probeReply{}, events: make(chan probeEvent, 1024), done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *probeConn) close() { c.conn.Close(); <-c.done }

func (c *probeConn) read() {
	defer close(c.done)
	for {
		var m struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := c.conn.ReadJSON(&m); err != nil {
			return
		}
		if m.ID == 0 {
			select {
			case c.events <- probeEvent{m.Method, m.Params}:
			default: // the probe reads only what it waits for
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		r := probeReply{result: m.Result}
		if m.Error != nil {
			r.err = errors.New(m.Error.Message)
		}
		ch <- r
	}
}

// send writes a command without waiting for its answer.
func (c *probeConn) send(session, method string, params any) chan probeReply {
	ch := make(chan probeReply, 1)
	c.mu.Lock()
	c.next++
	id := c.next
	c.pending[id] = ch
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	err := c.conn.WriteJSON(msg)
	c.mu.Unlock()
	if err != nil {
		ch <- probeReply{err: err}
	}
	return ch
}

// call sends a command and decodes its answer into out (nil: ignored).
func (c *probeConn) call(ctx context.Context, session, method string, params, out any) error {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	select {
	case r := <-c.send(session, method, params):
		if r.err != nil || out == nil {
			return r.err
		}
		return json.Unmarshal(r.result, out)
	case <-c.done:
		return errors.New("the DevTools connection closed")
	case <-ctx.Done():
		return fmt.Errorf("no answer to %s within %s", method, probeWait)
	}
}

// attached waits for the auto-attachment of target.
func (c *probeConn) attached(ctx context.Context, target string) (probeAttached, error) {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	for {
		select {
		case ev := <-c.events:
			if ev.method != "Target.attachedToTarget" {
				continue
			}
			var a probeAttached
			if json.Unmarshal(ev.params, &a) != nil {
				continue
			}
			if a.TargetInfo.TargetID == target {
				return a, nil
			}
			// Another target of the browser (another session's, even
			// another daemon's): let it go at once.
			if a.WaitingForDebugger {
				c.send(a.SessionID, "Runtime.runIfWaitingForDebugger", nil)
			}
			c.send("", "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID})
		case <-c.done:
			return probeAttached{}, errors.New("the DevTools connection closed")
		case <-ctx.Done():
			return probeAttached{}, fmt.Errorf("no Target.attachedToTarget within %s", probeWait)
		}
	}
}

type probeAttached struct {
	SessionID          string `json:"sessionId"`
	WaitingForDebugger bool   `json:"waitingForDebugger"`
	TargetInfo         struct {
		TargetID string `json:"targetId"`
	} `json:"targetInfo"`
}

// ProbePool runs the conformance probe a session's acquire runs on the
// browser at a cdp-url endpoint of a pool (doctor's probe), with gate as
// the throwaway context's proxy: the endpoint and the browser's
// WebSocket URL must be addresses in pools, and the browser must pass.
func ProbePool(endpoint string, pools []netip.Prefix, gate *egress.Gateway) error {
	if gate == nil || gate.Addr() == "" {
		return errNoGate
	}
	ws, err := poolBrowserURL(endpoint, pools, probeWait)
	if err != nil {
		return err
	}
	return probePool(ws, nil, gate)
}

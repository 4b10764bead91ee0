package executor

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/scope/egress"
)

// fakePool is a DevTools endpoint that answers the probe's commands as a
// pool browser would, or fails one of its checks as told.
type fakePool struct {
	product string
	waits   bool // new targets wait at start
	honours bool // a context's proxy is used: its pages ask the gate
	// loopbackAround sends loopback requests around the context's proxy.
	loopbackAround bool
	kind           string // the endpoint's target type ("browser", "page")
}

func (f fakePool) serve(t *testing.T, gate string) *httptest.Server {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			var m struct {
				ID     int64          `json:"id"`
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if c.ReadJSON(&m) != nil {
				return
			}
			result := map[string]any{}
			switch m.Method {
			case "Browser.getVersion":
				result = map[string]any{"product": f.product, "protocolVersion": "1.3"}
			case "Target.getTargetInfo":
				result = map[string]any{"targetInfo": map[string]any{"targetId": "B1", "type": f.kind}}
			case "Target.createBrowserContext":
				result = map[string]any{"browserContextId": "C1"}
			case "Target.createTarget":
				c.WriteJSON(map[string]any{"id": m.ID, "result": map[string]any{"targetId": "T1"}})
				c.WriteJSON(map[string]any{"method": "Target.attachedToTarget", "params": map[string]any{
					"sessionId": "S1", "waitingForDebugger": f.waits, "targetInfo": map[string]any{"targetId": "T1", "type": "page"}}})
				continue
			case "Page.navigate":
				u, _ := m.Params["url"].(string)
				if f.honours && !(f.loopbackAround && strings.HasPrefix(u, "http://127.")) {
					client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: gate})}}
					if resp, err := client.Get(u); err == nil {
						resp.Body.Close()
					}
				}
			}
			c.WriteJSON(map[string]any{"id": m.ID, "result": result})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestProbeRefusesAPoolBrowserThatCannotBeGoverned: the conformance probe
// passes a browser that is a Chromium, answers at a browser's endpoint,
// pauses a new target at start and sends a context's requests to
// the context's proxy (the gate sees the probe's host, and a loopback
// address), and refuses, with the reason, one that fails any of those.
func TestProbeRefusesAPoolBrowserThatCannotBeGoverned(t *testing.T) {
	t.Parallel()
	gate, err := egress.NewGateway(egress.GatewayConfig{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	const chromium = "HeadlessChrome/156.0.8078.108"
	for _, tc := range []struct {
		name string
		pool fakePool
		want string // "" passes
	}{
		{"a governable Chromium", fakePool{product: chromium, kind: "browser", waits: true, honours: true}, ""},
		{"not a Chromium", fakePool{product: "Firefox/140.0", kind: "browser", waits: true, honours: true}, "not a Chromium browser"},
		{"a page's endpoint, not the browser's", fakePool{product: chromium, kind: "page", waits: true, honours: true}, "not for a browser"},
		{"new targets do not wait at start", fakePool{product: chromium, kind: "browser", honours: true}, "does not wait at start"},
		{"the context's proxy is not used", fakePool{product: chromium, kind: "browser", waits: true}, "per-context proxy is not honoured"},
		{"loopback goes around the context's proxy", fakePool{product: chromium, kind: "browser", waits: true, honours: true, loopbackAround: true}, "sent a loopback request around it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tc.pool.serve(t, gate.Addr())
			ws := "ws" + strings.TrimPrefix(srv.URL, "http") + "/devtools/browser/B1"
			err := probePool(ws, nil, gate)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("probe: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrProbe) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("probe: %v, want ErrProbe saying %q", err, tc.want)
			}
		})
	}
}

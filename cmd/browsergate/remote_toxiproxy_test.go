package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/internal/testkit/netlab"
)

// toxiproxyEnv names toxiproxy's server (github.com/Shopify/toxiproxy/v2's
// cmd/server) for the remote benchmarks; `make bench-remote` builds it
// into .bench/ and sets it.
const toxiproxyEnv = "BROWSERGATE_TOXIPROXY"

// toxiproxy is toxiproxy's server on a lab host, as that host's DevTools
// forwarder: one proxy, "devtools", with a latency toxic on each direction
// (its latency toxic delays the data of one stream: "upstream", from the
// daemon to the browser, or "downstream", back), so that a round trip
// through it takes the sum of the two.
type toxiproxy struct {
	api    string // its HTTP API, on the host's loopback
	client *http.Client
}

// toxiproxyServer is the path of toxiproxy's server; it skips t when
// there is none.
func toxiproxyServer(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(toxiproxyEnv)
	if bin == "" {
		t.Skipf("%s names no toxiproxy server (make bench-remote builds one into .bench/)", toxiproxyEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("toxiproxy's server: %v", err)
	}
	return bin
}

// startToxiproxy runs toxiproxy's server bin inside h with its API on h's
// 127.0.0.1:8474, and has it forward listen to upstream (IP literals and
// ports) with no latency yet.
func startToxiproxy(t testing.TB, bin string, h *netlab.Host, listen, upstream string) *toxiproxy {
	t.Helper()
	cmd := h.Command(context.Background(), bin, "-host", "127.0.0.1", "-port", "8474")
	done := startGroup(t, "toxiproxy", cmd, filepath.Join(t.TempDir(), "toxiproxy.log"))
	tr := &http.Transport{DialContext: h.Dial}
	t.Cleanup(tr.CloseIdleConnections)
	tp := &toxiproxy{api: "http://127.0.0.1:8474", client: &http.Client{Transport: tr, Timeout: 5 * time.Second}}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := tp.client.Get(tp.api + "/version"); err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-done:
			t.Fatal("toxiproxy's server ended")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("toxiproxy's API did not answer within 10 s")
		}
	}
	tp.post(t, "/proxies", map[string]any{"name": "devtools", "listen": listen, "upstream": upstream, "enabled": true})
	for _, stream := range []string{"upstream", "downstream"} {
		tp.post(t, "/proxies/devtools/toxics", map[string]any{"name": stream, "type": "latency", "stream": stream,
			"toxicity": 1.0, "attributes": map[string]any{"latency": 0, "jitter": 0}})
	}
	return tp
}

// post sends body to toxiproxy's API and fails t unless it is done.
func (tp *toxiproxy) post(t testing.TB, path string, body any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tp.client.Post(tp.api+path, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatalf("toxiproxy %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var msg bytes.Buffer
		msg.ReadFrom(resp.Body)
		t.Fatalf("toxiproxy %s: %s: %s", path, resp.Status, msg.String())
	}
}

// setRTT gives the DevTools path a round trip of ms milliseconds more
// than it has without toxiproxy: half on each direction. Toxiproxy
// updates the toxics of the connections already open, the daemon's
// included.
func (tp *toxiproxy) setRTT(t testing.TB, ms int) {
	t.Helper()
	tp.post(t, "/proxies/devtools/toxics/upstream", map[string]any{"attributes": map[string]any{"latency": ms / 2}})
	tp.post(t, "/proxies/devtools/toxics/downstream", map[string]any{"attributes": map[string]any{"latency": ms - ms/2}})
}

// cdpProbe is a DevTools connection of its own to a pool host's browser,
// from the daemon's host through the same forwarder the daemon's go
// through, opened once: it sees a changed toxic as the daemon's
// connections do.
type cdpProbe struct {
	conn *websocket.Conn
	id   int64
}

// newCDPProbe connects from h to the browser's DevTools at endpoint
// (http://IP:PORT).
func newCDPProbe(t testing.TB, h *netlab.Host, endpoint string) *cdpProbe {
	t.Helper()
	tr := &http.Transport{DialContext: h.Dial}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(endpoint + "/json/version")
	if err != nil {
		t.Fatalf("the pool browser's DevTools: %v", err)
	}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	err = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if err != nil || v.WS == "" {
		t.Fatalf("the pool browser's /json/version: %v", err)
	}
	dialer := websocket.Dialer{NetDialContext: h.Dial, HandshakeTimeout: 10 * time.Second}
	conn, _, err := dialer.Dial(v.WS, nil)
	if err != nil {
		t.Fatalf("the pool browser's DevTools WebSocket: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &cdpProbe{conn: conn}
}

// rtt is the median of n round trips of a DevTools command that does no
// work in the browser (Browser.getVersion), in milliseconds.
func (p *cdpProbe) rtt(t testing.TB, n int) float64 {
	t.Helper()
	var ms []float64
	for range n {
		p.id++
		start := time.Now()
		if err := p.conn.WriteJSON(map[string]any{"id": p.id, "method": "Browser.getVersion"}); err != nil {
			t.Fatalf("probe: %v", err)
		}
		p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			var reply struct {
				ID int64 `json:"id"`
			}
			if err := p.conn.ReadJSON(&reply); err != nil {
				t.Fatalf("probe: %v", err)
			}
			if reply.ID == p.id {
				break
			}
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	return median(ms)
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); xs is sorted in place.
func median(xs []float64) float64 { return quantile(xs, 0.5) }

// quantile is the q-quantile of xs by linear interpolation between the
// closest ranks; xs is sorted in place. It is 0 for no xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

// rttName names a round trip for a sub-benchmark.
func rttName(ms int) string { return fmt.Sprintf("rtt-%dms", ms) }

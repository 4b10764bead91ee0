package netlab

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"
)

// chromiumPath is Debian's Chromium (DESIGN.md, "Testing").
const chromiumPath = "/usr/bin/chromium"

// Chromium starts Chromium inside h with the switches this project's
// tests run it with (testkit.ChromiumFlags), then extraFlags, a fresh
// profile under t.TempDir() and DevTools on h's 127.0.0.1:port, and
// returns once /json/version answers there, asked from inside h. The
// browser and its helpers are killed when t ends. It skips t when
// Chromium is not installed.
func (h *Host) Chromium(t testing.TB, port int, extraFlags ...string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("netlab: %s is not installed (apt-get install -y chromium)", chromiumPath)
	}
	args := append(testkit.ChromiumFlags(), extraFlags...)
	args = append(args, "--user-data-dir="+filepath.Join(t.TempDir(), "profile"),
		fmt.Sprintf("--remote-debugging-port=%d", port), "about:blank")
	p := h.start(t, chromiumPath, args...)
	tr := &http.Transport{DialContext: h.Dial}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/json/version", port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("netlab: Chromium in %s ended: %s", h.name, p.ended())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("netlab: Chromium in %s did not answer %s within 30 s", h.name, url)
		}
	}
}

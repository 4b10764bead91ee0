package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestLivePreloadingOff: the browser says whether "Preload pages" is off,
// whichever way live_endpoint names it, and the hidden tab asked through
// is gone afterwards; an endpoint that does not answer is an
// error, never an answer.
func TestLivePreloadingOff(t *testing.T) {
	t.Parallel()
	onPort, onDir := testkit.StartChromium(t, testkit.ChromiumFlags()...)
	offPort, offDir := testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
	for _, tc := range []struct {
		name     string
		endpoint string
		port     int
		want     bool
	}{
		{"on, http endpoint", fmt.Sprintf("http://127.0.0.1:%d", onPort), onPort, false},
		{"on, DevToolsActivePort", filepath.Join(onDir, "DevToolsActivePort"), onPort, false},
		{"off, http endpoint", fmt.Sprintf("http://127.0.0.1:%d", offPort), offPort, true},
		{"off, DevToolsActivePort", filepath.Join(offDir, "DevToolsActivePort"), offPort, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := targetCount(t, tc.port)
			off, err := LivePreloadingOff(tc.endpoint, 10*time.Second)
			if err != nil || off != tc.want {
				t.Fatalf("LivePreloadingOff(%s) = %v, %v; want %v", tc.endpoint, off, err, tc.want)
			}
			if after := targetCount(t, tc.port); after != before {
				t.Errorf("the browser had %d target(s) before the question and %d after: the hidden tab stayed", before, after)
			}
		})
	}
	for _, endpoint := range []string{"http://127.0.0.1:1", filepath.Join(t.TempDir(), "DevToolsActivePort")} {
		if _, err := LivePreloadingOff(endpoint, 2*time.Second); !errors.Is(err, ErrPreloading) {
			t.Errorf("LivePreloadingOff(%s): err = %v, want ErrPreloading", endpoint, err)
		}
	}
}

// targetCount is how many pages (and "other" targets: a hidden tab is
// one) the browser on port lists.
func targetCount(t *testing.T, port int) int {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/list", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var targets []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tg := range targets {
		if tg["type"] == "page" || tg["type"] == "other" {
			n++
		}
	}
	return n
}

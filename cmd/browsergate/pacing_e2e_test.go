package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"
)

// pacedManifest is a launched browser on 127.0.0.1, with %s for
// [browser.scope] requests_per_second_per_host (or nothing).
const pacedManifest = `
[tool]
name = "paced"
description = "a browser whose requests are paced per host"
timeout_seconds = 30

[browser]
connect = "launch"
startup_timeout_seconds = 30

[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
%s

[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`

// pacedResources is how many images the paced page loads from its own
// host.
const pacedResources = 4

// arrivals is a loopback site whose page loads pacedResources images
// from its own host; it notes when each request for the page or an
// image arrived.
type arrivals struct {
	mu    sync.Mutex
	paths []string
	times []time.Time
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/page":
	case strings.HasPrefix(r.URL.Path, "/r/"):
	default:
		http.NotFound(w, r) // the favicon: not counted
		return
	}
	a.mu.Lock()
	a.paths = append(a.paths, r.URL.Path)
	a.times = append(a.times, time.Now())
	a.mu.Unlock()
	if r.URL.Path == "/page" {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>paced</title><h1>paced</h1>")
		for i := range pacedResources {
			fmt.Fprintf(w, `<img src="/r/%d" alt="">`, i)
		}
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`)
}

func (a *arrivals) seen() ([]string, []time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.paths), slices.Clone(a.times)
}

// servePacedSite serves arrivals on 127.0.0.1 and starts browsergate with
// rate as its requests_per_second_per_host line.
func servePacedSite(t *testing.T, rate string) (*fixture, *arrivals, string) {
	t.Helper()
	site := &arrivals{}
	url, stop, err := serveOn("127.0.0.1:0", site)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return startWith(t, fmt.Sprintf(pacedManifest, rate)), site, url
}

// TestBrowserPacing: [browser.scope] requests_per_second_per_host paces
// the requests a browser session's pages make to one host, in the request
// guard.
//
//   - At 4 per second (which check reports), the page and its four
//     images arrive at the server a turn (250 ms) apart: two arrivals k
//     turns apart are at least k-1 turns apart, whatever the browser
//     would have done at once. The
//     spacing measured is the server's view of the browser's requests,
//     not how fast browsergate is.
//   - At one per 1000 seconds, the page has the host's turn and every
//     image is refused at once, by rule requests_per_second_per_host, and
//     the reply names each; the server sees only the page.
//   - Without the key, nothing is paced: all four images load, and
//     nothing is refused.
func TestBrowserPacing(t *testing.T) {
	t.Parallel()
	t.Run("paced", func(t *testing.T) {
		t.Parallel()
		f, site, url := servePacedSite(t, "requests_per_second_per_host = 4")
		f.mustAllow(t, "paced.navigate", map[string]any{"url": url + "/page"})
		testkit.Eventually(t, func() string {
			if paths, _ := site.seen(); len(paths) < 1+pacedResources {
				return fmt.Sprintf("the server saw %v, want the page and %d images", paths, pacedResources)
			}
			return ""
		})
		if out, code := runBinary(t, "check", "--manifest", f.manifest, "--policies", repoPath("policies")); code != 0 || !strings.Contains(out, "requests: paced to 4 per second per host") {
			t.Errorf("check does not say the requests are paced (exit %d):\n%s", code, out)
		}
		paths, times := site.seen()
		// A turn is 250 ms. A request continued at its turn reaches the
		// server a little later than its turn (the machine is busy), by
		// up to a turn's length allowed here: so any two arrivals k turns
		// apart are at least k-1 turns apart. Unpaced, the images arrive
		// within a few milliseconds of each other.
		const turn = 250 * time.Millisecond
		for i := range times {
			for j := i + 2; j < len(times); j++ {
				if gap, least := times[j].Sub(times[i]), time.Duration(j-i-1)*turn; gap < least {
					t.Errorf("%s arrived %s after %s, %d turns later, want at least %s: the requests to one host were not paced",
						paths[j], gap.Round(time.Millisecond), paths[i], j-i, least)
				}
			}
		}
	})
	t.Run("a turn that comes too late is refused", func(t *testing.T) {
		t.Parallel()
		f, site, url := servePacedSite(t, "requests_per_second_per_host = 0.001")
		out := f.mustAllow(t, "paced.navigate", map[string]any{"url": url + "/page"})
		for i := range pacedResources {
			if want := fmt.Sprintf("/r/%d (requests_per_second_per_host", i); !strings.Contains(out, want) {
				t.Errorf("the reply does not report image %d refused its turn (%q):\n%s", i, want, out)
			}
		}
		// The agent's own navigation to the host waits its turn like any
		// request: one that would come after timeout_seconds is refused,
		// saying why.
		text, refused := f.call(t, "paced.navigate", map[string]any{"url": url + "/page?again"})
		t.Logf("navigate again:\n%s", text)
		if !refused || !strings.Contains(text, "requests_per_second_per_host") {
			t.Errorf("a navigation whose turn comes after timeout_seconds was not refused by requests_per_second_per_host:\n%s", text)
		}
		if paths, _ := site.seen(); !slices.Equal(paths, []string{"/page"}) {
			t.Errorf("the server saw %v, want only /page: a request went without its turn", paths)
		}
	})
	t.Run("off by default", func(t *testing.T) {
		t.Parallel()
		f, site, url := servePacedSite(t, "")
		out := f.mustAllow(t, "paced.navigate", map[string]any{"url": url + "/page"})
		testkit.Eventually(t, func() string {
			if paths, _ := site.seen(); len(paths) < 1+pacedResources {
				return fmt.Sprintf("the server saw %v, want the page and %d images", paths, pacedResources)
			}
			return ""
		})
		if strings.Contains(out, "requests_per_second_per_host") {
			t.Errorf("without the key a request was paced:\n%s", out)
		}
	})
}

package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// ticksPage changes its text every 5 ms for 200 ms once started, by its
// button or, with ?onload, as it loads; its last text is "done after
// 200 ms". Its own world is told lies first: a
// MutationObserver that observes nothing, a clock that stands still, and
// timers that fire at once, so a quiet-DOM wait that ran in the page's
// world would end before the ticks do.
const ticksPage = `<!doctype html><title>Ticks</title>
<p id="out">not started</p>
<button id="go" onclick="start()">Start</button>
<script>
const every = setInterval, stop = clearInterval, clock = performance.now.bind(performance);
function start() {
  const began = clock();
  let n = 0;
  const id = every(() => {
    const done = clock() - began >= 200;
    document.getElementById('out').textContent = done ? 'done after 200 ms' : 'tick ' + ++n;
    if (done) stop(id);
  }, 5);
}
window.MutationObserver = class { observe() {} disconnect() {} takeRecords() { return []; } };
performance.now = () => 0;
Date.now = () => 0;
window.setTimeout = f => { Promise.resolve().then(f); return 0; };
if (location.search === '?onload') addEventListener('load', start);
</script>`

// forever changes its text every 5 ms from its button on, without end.
const foreverPage = `<!doctype html><title>Forever</title>
<p id="out">0</p>
<button id="go" onclick="let n = 0; setInterval(() => { document.getElementById('out').textContent = ++n; }, 5)">Start</button>`

// stillPage changes nothing, ever; its button does nothing.
const stillPage = `<!doctype html><title>Still</title><p>Nothing moves here.</p><button id="go">Nothing</button>`

// serveDOMPages serves the pages above on loopback.
func serveDOMPages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	for path, body := range map[string]string{"/ticks": ticksPage, "/forever": foreverPage, "/still": stillPage} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
	}
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site
}

// domQuietLog is how the quiet-DOM wait ended for each of the calls the
// log names, in order: the dom_quiet and dom_watched fields of the gate
// decision lines of command.
func domQuietLog(t *testing.T, f *fixture, command string) []string {
	t.Helper()
	var out []string
	for _, line := range logLines(t, f) {
		if line["msg"] == "gate decision" && line["command"] == command {
			out = append(out, fmt.Sprintf("%v watched=%v", line["dom_quiet"], line["dom_watched"]))
		}
	}
	return out
}

// TestDOMQuietWaitsOutAPageThatKeepsChanging: a page that changes every
// 5 ms for 200 ms after a click, or after it loads, is waited for until it
// stops: the snapshot right after the click or the navigate shows its
// last text. The page's lies to its own world (a MutationObserver that
// sees nothing, a stopped clock, timers that fire at once) change
// nothing: the wait runs in browsergate's isolated world.
func TestDOMQuietWaitsOutAPageThatKeepsChanging(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, connect, endpoint string) {
		live := ""
		if endpoint != "" {
			live = fmt.Sprintf("live_endpoint = %q", endpoint)
		}
		f := startWith(t, fmt.Sprintf(e2eManifest, connect, live), "--log-level", "info")
		site := serveDOMPages(t)

		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ticks"})
		f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
		if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "done after 200 ms") {
			t.Errorf("the snapshot after the click does not show the page's last change:\n%s", snap)
		}
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ticks?onload"})
		if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "done after 200 ms") {
			t.Errorf("the snapshot after the navigate does not show the page's last change:\n%s", snap)
		}
		f.cs.Close() // serve exits: its log is whole
		// How long each wait had left to wait depends on how busy the
		// machine was; that each ended on the page going still, on a
		// document watched since it loaded, does not.
		// One click, two navigates (the page, then the page that ticks as
		// it loads): a log with fewer lines would leave a wait unchecked.
		for _, c := range []struct {
			command string
			calls   int
		}{{"click", 1}, {"navigate", 2}} {
			command, lines := c.command, domQuietLog(t, f, c.command)
			if len(lines) != c.calls {
				t.Errorf("the log has %d gate decisions of a %s with their quiet-DOM wait, want %d: %q", len(lines), command, c.calls, lines)
			}
			for _, got := range lines {
				if got != "waited watched=true" && got != "quiet watched=true" {
					t.Errorf("a %s's quiet-DOM wait: %q, want it to end on the page going still, on a document watched since it loaded", command, got)
				}
			}
		}
	})
}

// TestDOMQuietEndsAtOnceOnAStillPage: the quiet-DOM window counts from the
// document's last change. A click on a page that changes nothing finds
// the document still for longer than the window (since it loaded, through
// the click's own quiet window of the network): its wait ends at once,
// and the log says so. The document was watched from its load on, in the
// world the wait reads.
func TestDOMQuietEndsAtOnceOnAStillPage(t *testing.T) {
	t.Parallel()
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""), "--log-level", "info")
	site := serveDOMPages(t)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/still"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
	// A snapshot changes nothing and waits for nothing.
	f.mustAllow(t, "e2e.snapshot", nil)
	f.cs.Close() // serve exits: its log is whole
	if got := domQuietLog(t, f, "click"); len(got) != 2 || got[0] != "quiet watched=true" || got[1] != "quiet watched=true" {
		t.Errorf("the clicks' quiet-DOM waits: %q, want both to have ended at once, on a document watched since it loaded", got)
	}
	if got := domQuietLog(t, f, "navigate"); len(got) != 1 || !strings.HasSuffix(got[0], "watched=true") {
		t.Errorf("the navigate's quiet-DOM wait: %q, want it on a document watched since it loaded", got)
	}
	if got := domQuietLog(t, f, "snapshot"); len(got) != 1 || got[0] != "<nil> watched=<nil>" {
		t.Errorf("the snapshot's log: %q, want no quiet-DOM wait", got)
	}
}

// TestDOMQuietIsCappedOnAPageThatNeverStops: a page that changes every
// 5 ms without end is waited for up to the cap, and then the click
// returns; the log says the wait was capped.
func TestDOMQuietIsCappedOnAPageThatNeverStops(t *testing.T) {
	t.Parallel()
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""), "--log-level", "info")
	site := serveDOMPages(t)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/forever"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
	f.cs.Close() // serve exits: its log is whole
	if got := domQuietLog(t, f, "click"); len(got) != 1 || got[0] != "capped watched=true" {
		t.Errorf("the click's quiet-DOM wait: %q, want it capped", got)
	}
}

// TestDOMQuietWatchesANewTab: a tab the session opens is watched from its
// document's load as the first tab is (the target guard registers the
// watch for every page it prepares): a click on a still page in it ends
// its wait at once, on a watched document.
func TestDOMQuietWatchesANewTab(t *testing.T) {
	t.Parallel()
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""), "--log-level", "info")
	site := serveDOMPages(t)
	f.mustAllow(t, "e2e.new_tab", map[string]any{"url": site + "/still"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
	f.cs.Close() // serve exits: its log is whole
	if got := domQuietLog(t, f, "click"); len(got) != 1 || got[0] != "quiet watched=true" {
		t.Errorf("the click's quiet-DOM wait in the new tab: %q, want it to have ended at once, on a document watched since it loaded", got)
	}
}

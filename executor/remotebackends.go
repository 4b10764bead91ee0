package executor

import (
	"fmt"
	"time"

	"github.com/browsergate/browsergate/toolclad"
)

// Which backend a remote session gets: a pool host's browser, shared by
// the sessions on it, or a browser of its own.

// poolEndpointLocked picks the pool host a new session of m opens its
// browser context on: of the manifest's endpoints, the one with the
// fewest open sessions, a host whose browser could not be reached in the
// last poolRetryAfter taken only when every one failed so; e.mu must be
// held. Each endpoint is a backend of its own, shared by its sessions.
func (e *Executor) poolEndpointLocked(m *toolclad.Manifest) string {
	open := map[string]int{}
	for k, s := range e.sessions {
		if k.manifest == m {
			open[s.backend.key.endpoint]++
		}
	}
	best, bestN, bestFailed := "", 0, true
	for _, ep := range m.Browser.Remote.Endpoints {
		failed := false
		for k, b := range e.backends {
			if k.manifest == m && k.endpoint == ep {
				failed = b.failedRecently(poolRetryAfter)
			}
		}
		n := open[ep]
		if best == "" || bestFailed && !failed || failed == bestFailed && n < bestN {
			best, bestN, bestFailed = ep, n, failed
		}
	}
	return best
}

// poolRetryAfter is how long a pool host whose browser could not be
// reached is passed over while another can take the session.
const poolRetryAfter = 30 * time.Second

// A session of a manifest whose provider gives each session a browser
// of its own (a Selenium Grid's: ownBrowser) has a backend of its own
// too: the backend is per browser, as everywhere, and here the browser is
// per session. Its key names a slot numbered for the daemon's life, not
// the WebDriver session, which is made only when the session first needs
// its browser, and made anew should the Grid lose it; the backend logs
// each. The backend goes with its session: ending the session shuts it
// down (release deletes the Grid session) and forgets it, and a session
// that expires lets its browser go at once (armTimers), since its next
// call starts a new session anyway.

// ownBrowserSlotLocked is the endpoint of the key of a new session's own
// browser on m; e.mu must be held.
func (e *Executor) ownBrowserSlotLocked(url string) string {
	e.ownBrowsers++
	return fmt.Sprintf("%s (browser %d)", url, e.ownBrowsers)
}

// dropOwnBrowser shuts down the browser of an ended session that had one
// of its own, and forgets its backend; e.mu must not be held.
func (e *Executor) dropOwnBrowser(s *session) {
	b := s.backend
	if b == nil || !b.oneSession() {
		return
	}
	e.mu.Lock()
	if e.backends[b.key] == b {
		delete(e.backends, b.key)
	}
	e.mu.Unlock()
	b.shutdown()
}

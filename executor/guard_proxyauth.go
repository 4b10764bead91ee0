package executor

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/browsergate/browsergate/scope/egress"
)

// A remote session's browser context names the daemon's gate as its
// proxy, and the gate lets a request through only with the session's own
// credentials (egress.Gateway). The browser learns them from the
// session's guard alone: each target's Fetch domain handles
// authentication, and when the gate answers 407 the browser asks the
// guard (Fetch.authRequired), which gives the session's credentials to a
// challenge from the proxy and to nothing else. Chromium then keeps them
// in the browser context's own authentication cache, so the context's
// later requests (a worker's too) carry them; no other context has them.
// A challenge the guard cannot answer is cancelled: the request fails,
// and nothing goes around the gate.

// proxyCredentials are what a session's guard answers its proxy's
// challenge with.
type proxyCredentials struct {
	gate string // the gate's host:port, as a challenge's origin names it
	egress.Credentials
}

// authRequired answers one Fetch.authRequired event.
func (g *targetGuard) authRequired(ctx context.Context, m cdpMessage) {
	var e struct {
		RequestID string `json:"requestId"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
		Challenge struct {
			Source string `json:"source"`
			Origin string `json:"origin"`
		} `json:"authChallenge"`
	}
	if json.Unmarshal(m.Params, &e) != nil || e.RequestID == "" {
		return
	}
	answer := map[string]any{"response": "Default"}
	switch {
	case e.Challenge.Source == "Proxy" && g.proxyAuth != nil && g.isGate(e.Challenge.Origin) && g.firstChallenge(e.RequestID):
		answer = map[string]any{"response": "ProvideCredentials", "username": g.proxyAuth.Username, "password": g.proxyAuth.Password}
	case e.Challenge.Source == "Proxy":
		// Only the gate is this context's proxy, and it takes the
		// session's credentials at once: a challenge from anything else,
		// or the gate's second for one request (the session has ended),
		// gets nothing, and the request fails.
		answer = map[string]any{"response": "CancelAuth"}
		g.logger.Debug("target guard: a proxy challenge was cancelled", "origin", e.Challenge.Origin, "url", e.Request.URL)
	}
	// A site's own challenge (source Server) is left to the browser, as
	// in a session without handled authentication: a headless browser
	// cancels it.
	g.answer(ctx, m.SessionID, "Fetch.continueWithAuth", map[string]any{"requestId": e.RequestID, "authChallengeResponse": answer}, e.Request.URL)
}

// isGate says whether a challenge's origin is the gate the session's
// context was made with.
func (g *targetGuard) isGate(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && g.proxyAuth != nil && u.Host == g.proxyAuth.gate
}

// firstChallenge says whether the gate challenges the request for the
// first time: it is then given the credentials; a second challenge is
// cancelled rather than answered again, which would loop. The ids are
// forgotten past challengesKept (a request challenged twice in a row is
// answered and cancelled long before).
func (g *targetGuard) firstChallenge(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.challenged[id] {
		return false
	}
	if g.challenged == nil || len(g.challenged) >= challengesKept {
		g.challenged = map[string]bool{}
	}
	g.challenged[id] = true
	return true
}

// challengesKept bounds the request ids firstChallenge remembers.
const challengesKept = 4096

package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The guard holds the session's emulation (commands_emulate.go) and gives
// it to each of the session's own pages: those it has when emulate runs,
// and each it prepares later (a new tab, a popup), before the page runs.
// The Emulation commands go to page targets on the guard's own DevTools
// session, which stays attached as long as the page is the session's; a
// user's tab the session adopted gets none. The network conditions are a
// rule for every request, sent after the WebSocket rules in the user's
// context (netRules) and on their own elsewhere, to pages and their
// out-of-process frames (and, in the user's context, every target given
// the WebSocket rules).

// emulationState is what the guard keeps of the session's emulation
// (under mu): the settings and the commands a page is given.
type emulationState struct {
	settings emulation
	calls    []cdpCall
}

// currentEmulation is the session's emulation now.
func (g *targetGuard) currentEmulation() emulation {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.emu.settings
}

// emulate gives the session's pages the emulation e (its commands calls):
// the current tab first, each command awaited, so that a refusal (an
// unknown timezone) comes back as an *emulationError before any other tab
// changes; then every other page of the session's, and every target the
// network conditions go to. A page that closed meanwhile is skipped; one
// with no renderer yet gets the commands when it runs, in order.
func (g *targetGuard) emulate(ctx context.Context, current string, e emulation, calls []cdpCall) error {
	cur := g.sessionOf(current)
	if cur == "" {
		return errors.New("the current tab is not under the session's guard")
	}
	for _, c := range calls {
		if _, err := g.call(ctx, cur, c.method, c.params); err != nil {
			return &emulationError{method: c.method, err: err}
		}
	}
	g.mu.Lock()
	g.emu = emulationState{settings: e, calls: calls}
	if e.zero() {
		g.emu.calls = nil // a page prepared from now on needs nothing
	}
	g.mu.Unlock()
	for _, page := range g.ownPages(current) {
		session := g.sessionOf(page)
		if session == "" {
			continue // let go meanwhile
		}
		for _, c := range calls {
			ch, err := g.send(session, c.method, c.params)
			if err != nil {
				return err // the connection is gone
			}
			if _, err := g.await(ctx, c.method, ch, renderlessWait); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				if !strings.Contains(err.Error(), "Session with given id not found") {
					g.logger.Warn("target guard: a page of the session refused its emulation", "method", c.method, "error", err)
				}
				break
			}
		}
	}
	g.wsMu.Lock()
	g.throttle = throttleRule(e)
	g.wsMu.Unlock()
	g.refreshWebSocketRules(ctx, func() []wsRule { return g.wsRules })
	return nil
}

// netRulesFor are the network rules for the target of a guard session
// (under wsMu): netRules, but for a user's tab the session adopted, and
// its frames and workers, the WebSocket rules alone: the user's tab keeps
// the user's network.
func (g *targetGuard) netRulesFor(session string) []wsRule {
	if g.throttle != nil && g.isUserTab(g.pageOf(session)) {
		return append([]wsRule{}, g.wsRules...)
	}
	return g.netRules()
}

// netRules are the network rules a target is given (under wsMu): the
// WebSocket rules, then the session's throttling for every request.
func (g *targetGuard) netRules() []wsRule {
	rules := append([]wsRule{}, g.wsRules...) // never null: the browser refuses that
	if g.throttle != nil {
		rules = append(rules, *g.throttle)
	}
	return rules
}

// emulationCalls are the commands a page of the session is prepared with
// (none for a user's tab, or while nothing is emulated).
func (g *targetGuard) emulationCalls(target string) []cdpCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users[target] {
		return nil
	}
	return g.emu.calls
}

// browserUserAgent is the browser's own user agent.
func (g *targetGuard) browserUserAgent(ctx context.Context) (string, error) {
	raw, err := g.call(ctx, "", "Browser.getVersion", map[string]any{})
	if err != nil {
		return "", err
	}
	var v struct {
		UserAgent string `json:"userAgent"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.UserAgent == "" {
		return "", fmt.Errorf("no user agent in %s", raw)
	}
	return v.UserAgent, nil
}

// throttleRule is the network rule for e's network preset (nil: none):
// for every request, so listed after the WebSocket rules (first match
// wins).
func throttleRule(e emulation) *wsRule {
	p, ok := networkPresets[e.network]
	if !ok {
		return nil
	}
	r := wsRule{URLPattern: "", Offline: p.offline, Latency: p.latency, DownloadThroughput: p.down, UploadThroughput: p.up}
	if p.offline {
		r.DownloadThroughput, r.UploadThroughput = -1, -1
	}
	return &r
}

// ownPages are the target ids of the session's own pages but except:
// every page it guards but the user's tabs it adopted.
func (g *targetGuard) ownPages(except string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ids []string
	for _, id := range g.pages {
		if id != except && !g.users[id] {
			ids = append(ids, id)
		}
	}
	return ids
}

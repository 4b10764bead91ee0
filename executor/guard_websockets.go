package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/scope"
)

// In the user's browser context no egress proxy stands between the pages
// and the network (a proxy is a property of a browser context, and the
// user's is not ours to change), and Fetch interception does not see
// WebSockets. So each target a session guards there gets network-condition
// rules (Network.emulateNetworkConditionsByRule, enforced by the browser's
// network service, which the page cannot reach): a WebSocket to a host and
// port the scope allows is left alone, every other ws: and wss: URL is
// "offline" — no connection is made. Chromium takes the first rule that
// matches, so the allowances come first and two catch-alls last.
//
// The rules are URLPatterns, which cannot say everything a scope says, so
// they are built to fail closed: an allowed_domains entry that has no exact
// URLPattern (a wildcard inside a label, "admin.*", a bare "*",
// allow_external's "any other host") gets no WebSocket allowance; a
// blocked_domains entry that has none withdraws every wildcard allowance;
// the ports of each allowance are the scope's own answer for a host it
// names, listed port by port, and a host allowed on too many scattered
// ports to list gets none.

// wsRule is one entry of Network.emulateNetworkConditionsByRule.
type wsRule struct {
	URLPattern string `json:"urlPattern"`
	Offline    bool   `json:"offline"`
	// No throttling: the rule only decides offline or not.
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

func newWSRule(pattern string, offline bool) wsRule {
	return wsRule{URLPattern: pattern, Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}
}

// maxListedPorts bounds the ports listed one by one for a host: beyond it
// the host's WebSockets are allowed on every port but the listed refusals,
// or on none.
const maxListedPorts = 32

// wsProbeLabel stands for "any subdomain" when the ports of a "*." entry
// are asked of the scope.
const wsProbeLabel = "browsergate-ws-probe"

// webSocketRules builds the rules for a scope. allowed answers whether a
// host (canonical) may be reached on a port: the scope's CheckHost and the
// daemon's own endpoints.
func webSocketRules(sc *scope.Scope, allowed func(host string, port uint16) bool) []wsRule {
	allowedPats, blockedPats, _ := sc.Domains()
	var rules []wsRule
	wildcards := true
	for _, p := range blockedPats {
		h, ok := p.URLPatternHost()
		if !ok {
			wildcards = false // a block we cannot express: no wildcard allowance may cover it
			continue
		}
		rules = append(rules, newWSRule("ws://"+h+":*/*", true), newWSRule("wss://"+h+":*/*", true))
	}
	for _, p := range allowedPats {
		h, ok := p.URLPatternHost()
		if !ok {
			continue
		}
		probe := h
		if strings.HasPrefix(h, "*.") {
			if !wildcards {
				continue
			}
			probe = wsProbeLabel + h[1:]
		}
		rules = append(rules, hostRules(h, func(port uint16) bool { return allowed(probe, port) })...)
	}
	return append(rules, newWSRule("ws://*:*/*", true), newWSRule("wss://*:*/*", true))
}

// hostRules allows WebSockets to host (a URLPattern hostname) on the ports
// ok allows.
func hostRules(host string, ok func(port uint16) bool) []wsRule {
	var yes, no []uint16
	for p := 1; p <= 65535; p++ {
		if ok(uint16(p)) {
			yes = append(yes, uint16(p))
		} else {
			no = append(no, uint16(p))
		}
	}
	var rules []wsRule
	both := func(port string, offline bool) {
		rules = append(rules, newWSRule("ws://"+host+":"+port+"/*", offline), newWSRule("wss://"+host+":"+port+"/*", offline))
	}
	switch {
	case len(yes) == 0:
	case len(yes) <= maxListedPorts:
		for _, p := range yes {
			both(fmt.Sprint(p), false)
		}
	case len(no) <= maxListedPorts:
		for _, p := range no {
			both(fmt.Sprint(p), true)
		}
		both("*", false)
	}
	return rules
}

// wsAllowed returns the allowed func of webSocketRules for a backend,
// with the daemon's endpoints as they are now: the scope's answer, and
// never one of those endpoints. The scope's answers are kept per host
// (wsScopePorts), so that rules built again as endpoints come and go
// (refreshWebSocketRules) ask the scope nothing more.
func (b *backend) wsAllowed() func(host string, port uint16) bool {
	sc := b.scope.Load()
	refused := map[string]map[uint16]bool{}
	return func(host string, port uint16) bool {
		ports := b.wsScopePorts(sc, host)
		if !ports.allowed(port) {
			return false
		}
		r, ok := refused[ports.host]
		if !ok {
			r = b.listeners.refusedPorts(ports.host)
			refused[ports.host] = r
		}
		return !r[port]
	}
}

// wsPorts is the scope's answer for one host on every port: host is the
// host as the scope judged it (Verdict.Host), bits the ports it allows.
type wsPorts struct {
	host string
	bits [65536 / 64]uint64
}

func (p *wsPorts) allowed(port uint16) bool { return p.bits[port/64]&(1<<(port%64)) != 0 }

// wsScopeKey names the answers of one scope for one host.
type wsScopeKey struct {
	scope *scope.Scope
	host  string
}

// wsScopePorts asks sc about host on every port, once per scope and host.
func (b *backend) wsScopePorts(sc *scope.Scope, host string) *wsPorts {
	k := wsScopeKey{sc, host}
	b.wsPortsMu.Lock()
	defer b.wsPortsMu.Unlock()
	if p := b.wsPortsCache[k]; p != nil {
		return p
	}
	for old := range b.wsPortsCache {
		if old.scope != sc {
			delete(b.wsPortsCache, old) // a scope the backend no longer has (setScope)
		}
	}
	p := &wsPorts{host: host}
	for port := 1; port <= 65535; port++ {
		if v := sc.CheckHost(host, uint16(port)); v.Allowed {
			p.host = v.Host
			p.bits[port/64] |= 1 << (port % 64)
		}
	}
	if b.wsPortsCache == nil {
		b.wsPortsCache = map[wsScopeKey]*wsPorts{}
	}
	b.wsPortsCache[k] = p
	return p
}

// wsRulesMethod sets a target's WebSocket rules.
const wsRulesMethod = "Network.emulateNetworkConditionsByRule"

// refreshWebSocketRules sets the rules build returns on every target the
// guard gave rules to, and on those it prepares from now on. build runs
// under wsMu, so refreshes that race each other send in the order they
// read the daemon's endpoints. A target whose session is gone is
// forgotten; one that answers with another error has its page closed
// (failedRules), though no prepared target has been seen to refuse them.
func (g *targetGuard) refreshWebSocketRules(ctx context.Context, build func() []wsRule) {
	type sent struct {
		session string
		ch      chan cdpReply
	}
	var out []sent
	g.wsMu.Lock()
	g.wsRules = build()
	for session := range g.wsSessions {
		ch, err := g.send(session, wsRulesMethod, map[string]any{"matchedNetworkConditions": g.netRulesFor(session)})
		if err != nil {
			g.wsMu.Unlock()
			return // the connection is gone, and every session on it
		}
		out = append(out, sent{session, ch})
	}
	g.wsMu.Unlock()
	for _, s := range out {
		_, err := g.await(ctx, wsRulesMethod, s.ch, renderlessWait)
		switch {
		case err == nil || errors.Is(err, context.DeadlineExceeded):
			// A target that has no renderer yet answers once it runs,
			// its commands in order.
		case ctx.Err() != nil:
			return // the session is ending
		case strings.Contains(err.Error(), "Session with given id not found"):
			// Closed, or let go (a user's tab): nothing to hold to rules.
			g.wsMu.Lock()
			delete(g.wsSessions, s.session)
			g.wsMu.Unlock()
		default:
			select {
			case <-g.done:
				return // the guard's connection closed
			default:
			}
			g.failedRules(s.session, err)
		}
	}
}

// forgetRules forgets a target that detached (it closed, or the guard
// let it go): no rules are sent to it again.
func (g *targetGuard) forgetRules(m cdpMessage) {
	var e struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Params, &e) == nil && e.SessionID != "" {
		g.wsMu.Lock()
		delete(g.wsSessions, e.SessionID)
		g.wsMu.Unlock()
	}
}

// failedRules closes the page of a target that did not take new
// WebSocket rules (the target itself, or the page its frame is in): the
// rules it keeps may allow one of the daemon's endpoints. A user's tab is
// the user's, not closed: the failure is logged as an error.
func (g *targetGuard) failedRules(session string, err error) {
	g.mu.Lock()
	top := session
	for i := 0; i < 32 && g.parent[top] != ""; i++ {
		top = g.parent[top]
	}
	id, isPage := g.pages[top]
	user := g.users[id]
	g.mu.Unlock()
	if !isPage || user {
		g.logger.Error("target guard: a target did not take new WebSocket rules; it keeps its rules", "session", session, "error", err)
		return
	}
	g.logger.Warn("target guard: a target did not take new WebSocket rules; its page is closed", "session", session, "page", id, "error", err)
	if _, cerr := g.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": id}); cerr != nil {
		g.logger.Error("target guard: the page of a target that did not take new WebSocket rules could not be closed", "page", id, "error", cerr)
	}
}

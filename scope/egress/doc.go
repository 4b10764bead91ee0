// Package egress is the second layer of browsergate's egress gate: an
// HTTP/1.1 forward proxy that every request of a browser browsergate
// launches goes through (Chromium runs with
// --proxy-server=http://127.0.0.1:P --proxy-bypass-list=<-loopback>), and
// that enforces the URL scope on the wire.
//
// # Why a proxy
//
// Request interception over CDP sees URLs, not connections: measured on
// Chromium 156, a navigation blocked at the request level still opens a TCP
// connection to the forbidden address first, and the browser's own DNS
// cache lets a rebinding name reach a second, private answer. The proxy is
// the only place that sees every connection before it is made, and it makes
// the connection itself.
//
// # What the proxy does for each request
//
// It serves absolute-form requests ("GET http://host/path HTTP/1.1"), with
// streamed bodies, hop-by-hop headers removed (RFC 9110 section 7.6.1) and
// WebSocket upgrades, and CONNECT host:port tunnels (https, ws and wss).
// Origin-form requests ("GET /path"), absolute-form requests for schemes
// other than http and ws, and requests without a valid port are refused
// with 400: the proxy is a proxy, not an origin server, and it never speaks
// TLS to an upstream on a client's behalf.
//
// For every request or tunnel it then:
//
//  1. asks Policy.CheckHost(host, port) about the host named in the
//     request-target (for absolute-form requests the Host header is ignored
//     and rewritten to the target's authority, as RFC 9112 section 3.2.2
//     requires; a different Host header can therefore not smuggle another
//     virtual host past the check);
//  2. takes the address of an IP-literal host as it is, or resolves the
//     host (as the policy canonicalised it, Verdict.Host) exactly once with
//     Resolver, within ResolveTimeout; no answer is a failure;
//  3. asks Policy.CheckAddrPort about every answer: one denied answer
//     refuses the request, so a mixed public/private answer set cannot be
//     used to reach the private half. A host the policy allowed with
//     Verdict.Ask set is outside the scope's own domains and reachable
//     only because a human approved it as a public host: every one of its
//     answers must also be globally reachable (scope.Classify), whatever
//     the policy's grants admit (RuleApprovedNotGlobal);
//  4. refuses its own listening address, and that of every Gateway it was
//     added to (a request looping through the proxy would be checked
//     against the proxy, not the page, and a page must not reach the
//     listener every session shares);
//  5. dials exactly one checked address, as an IP literal "ip:port", never
//     the name: there is no second lookup, so DNS rebinding cannot swap the
//     target between check and connect.
//
// Absolute-form requests share one http.Transport whose outgoing URLs carry
// the pinned IP literal as their host, so its connection pool is keyed by
// the checked ip:port: a kept-alive upstream connection is only ever reused
// for a later request whose own check pinned the same address, which is
// exactly what a fresh dial would have reached. Its DialContext accepts
// only the address pinned for the request that triggered it
// (ErrUnpinnedDial otherwise), as a second lock on the same door.
//
// # Outcomes
//
// A policy denial, or a request to the proxy itself, is answered 403 with a
// short text body and the headers X-Browsergate-Denied (the rule) and
// X-Browsergate-Reason (the reason). A failed lookup is 502 with rule
// "dns" (504 when the lookup timed out); a failed dial is 502 with rule
// "dial" (504 on timeout); an upstream that fails after the dial is 502
// with rule "upstream", and 504 when it sent no response headers within
// ResponseHeaderTimeout. Every outcome, allowed or not, is one Decision,
// passed to Config.OnDecision and logged as one structured record, in the
// manner of smokescreen's canonical proxy decision line.
//
// # Bounds and shutdown
//
// The proxy listens on loopback only (Listen refuses anything else; a
// Gateway, which admits only credentials, may listen anywhere), bounds
// request headers in size and in read time, bounds the wait for an
// upstream's response headers, closes a CONNECT tunnel in which no byte has
// moved either way for TunnelIdleTimeout, and tracks every connection it
// serves or tunnels. Close stops the listener, cancels every request in
// flight (a request that has passed its checks but not yet dialled will not
// dial), closes every tunnel and pooled upstream connection, and waits for
// the proxy's goroutines to end. A closed proxy forwards nothing, and a
// browser configured to use it gets connection errors: there is no direct
// fallback.
//
// # One listener for many sessions
//
// A browser on another machine (a pool host) cannot reach a proxy on the
// daemon's loopback. A Gateway is one listener, on an address the pool can
// reach, for every session's Proxy: each session's browser context is
// created with that address as its proxyServer, and Gateway.Add gives the
// session random credentials that the daemon answers the gateway's 407
// challenge with (Fetch.authRequired). Every request, CONNECT or
// absolute-form, each one on a kept-alive connection, is routed by the
// Basic credentials in its Proxy-Authorization to the one proxy they name
// and judged by that proxy's policy alone; missing, malformed, unknown,
// wrong or removed credentials get 407 and nothing is resolved, dialled or
// forwarded. The field is removed before the proxy sees the request, so no
// upstream ever receives it. Removing a route, or closing its proxy, ends
// its requests in flight and its tunnels through the gateway.
package egress

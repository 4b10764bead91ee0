package executor

import (
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/browsergate/browsergate/scope/egress"
)

// A site that does not answer is not a refusal. The egress proxy answers
// a request whose dial failed (refused, reset, timed out, a name with no
// address) with an error response of its own; those are kept here, apart
// from the refusals of the block log, so that the reply's list of blocked
// requests holds only what the policy refused, and so that a navigate
// whose own request found no site says so, as an error, instead of
// showing the proxy's words as the page.

// maxUnreachable is how many failed dials a session keeps: navigate needs
// only the ones of its own call.
const maxUnreachable = 64

// unreachableLog holds the session's latest failed dials. Its zero value
// is ready to use.
type unreachableLog struct {
	mu      sync.Mutex
	next    int // the position of the next failure
	entries []unreachable
}

// unreachable is one failed dial: the proxy's target (an absolute URL, or
// host:port for a tunnel) and why it failed, in a few words.
type unreachable struct {
	pos    int
	target string
	why    string
}

// isUnreachableRule reports whether an egress refusal's rule is a site
// that did not answer rather than a policy's refusal.
func isUnreachableRule(rule string) bool {
	return rule == egress.RuleDial || rule == egress.RuleDNS
}

// note keeps a failed dial.
func (l *unreachableLog) note(target, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, unreachable{pos: l.next, target: target, why: unreachableWhy(reason)})
	l.next++
	if len(l.entries) > maxUnreachable {
		l.entries = append(l.entries[:0], l.entries[len(l.entries)-maxUnreachable:]...)
	}
}

// mark is the position of the next failure: since(mark, …) looks only at
// those noted after it.
func (l *unreachableLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// since says why the request for rawURL failed to reach its site, when a
// failure for it was noted after mark ("" when none was): the proxy names
// a plain request by its URL and a tunnel by its host and port.
func (l *unreachableLog) since(mark int, rawURL string) string {
	want, tunnel := unreachableTargets(rawURL)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.entries) - 1; i >= 0 && l.entries[i].pos >= mark; i-- {
		if e := l.entries[i]; e.target == want || e.target == tunnel {
			return e.why
		}
	}
	return ""
}

// unreachableTargets are the targets the proxy gives a request for
// rawURL: the URL without its fragment, and host:port (port defaulted by
// the scheme) for a tunnel.
func unreachableTargets(rawURL string) (plain, tunnel string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL, ""
	}
	u.Fragment, u.RawFragment = "", ""
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		}
	}
	return u.String(), net.JoinHostPort(u.Hostname(), port)
}

// unreachableWhy puts the proxy's reason for a failed dial in the words a
// user knows it by ("connection refused"); another reason is given as
// its last clause, the system's own words.
func unreachableWhy(reason string) string {
	low := strings.ToLower(reason)
	switch {
	case strings.Contains(low, "connection refused"):
		return "connection refused"
	case strings.Contains(low, "connection reset"):
		return "connection reset"
	case strings.Contains(low, "no such host"):
		return "no such host: the name has no address"
	case strings.Contains(low, "timeout"), strings.Contains(low, "timed out"), strings.Contains(low, "deadline exceeded"):
		return "timed out"
	case strings.Contains(low, "network is unreachable"), strings.Contains(low, "no route to host"):
		return "no route to the host"
	}
	if i := strings.LastIndex(reason, ": "); i >= 0 {
		return reason[i+2:]
	}
	return reason
}

package executor

import (
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/scope"
)

// Request interception is the first layer of the egress gate: each
// session's target guard (attach.go) enables Fetch on every target of the
// session, which pauses each request before it is sent; it is checked
// against the scope and failed as BlockedByClient when out of scope.
// WebSockets are not Fetch requests: the egress proxy stops them.

// Blocked is one request the egress gate refused.
type Blocked struct {
	Time   time.Time
	URL    string
	Rule   string
	Reason string
	Layer  string // "interception" or "proxy"
}

// blockLog collects refused requests so that each call can report those
// that happened while it ran.
type blockLog struct {
	mu      sync.Mutex
	entries []Blocked
	base    int // number of entries dropped from the front
	// navs are the tabs (target id) whose own navigation was refused, and
	// to where: such a tab (a popup opened straight at a forbidden URL)
	// may still show about:blank, and is closed all the same.
	navs map[string]string
}

// navBlocked records that the main frame of tab target tried to load url
// and was refused.
func (l *blockLog) navBlocked(target, url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.navs == nil {
		l.navs = map[string]string{}
	}
	l.navs[target] = url
}

// blockedNav returns where tab target last tried to go and was refused
// ("" when it never was).
func (l *blockLog) blockedNav(target string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.navs[target]
}

// maxBlockLog bounds memory: older entries are dropped.
const maxBlockLog = 1000

func (l *blockLog) add(b Blocked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, b)
	if len(l.entries) > maxBlockLog {
		drop := len(l.entries) - maxBlockLog
		l.entries = append([]Blocked(nil), l.entries[drop:]...)
		l.base += drop
	}
}

// mark is the position to collect from.
func (l *blockLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base + len(l.entries)
}

// since returns the entries added after mark.
func (l *blockLog) since(mark int) []Blocked {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := max(mark-l.base, 0)
	if i >= len(l.entries) {
		return nil
	}
	return append([]Blocked(nil), l.entries[i:]...)
}

// interceptor judges the URL of a paused request; refusals go to log.
type interceptor struct {
	check func(url string) scope.Verdict
	log   *blockLog
}

// decide judges one paused request. Schemes that never leave the machine
// (data:, blob:, about:) continue; http(s) and ws(s) are checked against
// the scope; everything else is refused.
func (ic *interceptor) decide(url string) scope.Verdict {
	lower := strings.ToLower(url)
	for _, local := range []string{"data:", "blob:", "about:"} {
		if strings.HasPrefix(lower, local) {
			return scope.Verdict{Allowed: true, URL: url, Rule: "local scheme"}
		}
	}
	return ic.check(url)
}

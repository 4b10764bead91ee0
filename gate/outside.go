package gate

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// A navigate to a public host outside allowed_domains, in a scope that
// asks about such hosts ([browser.scope] ask_external), is held for a
// human instead of refused (wcore-browser's default_action = "ask",
// browxai's confirmation before leaving the allowlist). What an approval
// of one does, and nothing more:
//
//   - that navigate runs, to that URL exactly (the approval is bound to
//     the call: its arguments and its destination);
//   - the URL's origin (scheme, host and port) becomes reachable by the
//     session's pages for the rest of the session (OutsideOrigins): the
//     page's own subresources, its links and forms to that origin, and
//     redirects within it. An http URL on the default port also opens
//     the same host's https origin on its default port (AdmittedOrigins):
//     Chromium upgrades http navigations to https by itself, and the
//     upgrade goes to the host the human approved, on a stronger scheme.
//     Every other host outside allowed_domains stays refused, a redirect
//     from the approved URL to yet another host included;
//   - Cedar still decides the navigate, with human_approved = true and
//     url_domain in Web::DomainSet::"ask_external".
//
// A navigate the agent makes outside allowed_domains is asked about every
// time, to an origin approved before too: an approval is for one call.
// Blocked domains and every address class blocked outright are refused
// at once and never put to a human: the scope does not mark them askable.

// Outside is a navigate held because its URL is outside allowed_domains.
type Outside struct {
	URL    string       // the URL as the scope read it (canonical)
	Origin scope.Origin // what an approval makes reachable for the session
	Reason string       // why it is outside, in the scope's words
}

// AsksOutside reports whether the agent can put a URL outside
// allowed_domains to a human under m: the scope asks about such hosts and
// the manifest declares navigate with a scope-checked url. Refusals of
// such URLs then say how to ask.
func AsksOutside(m *toolclad.Manifest) bool {
	if m == nil || !m.Browser.Scope.AskExternal {
		return false
	}
	nav := m.Command("navigate")
	if nav == nil {
		return false
	}
	for _, a := range nav.Args {
		if a.Name == "url" && a.Type == toolclad.TypeURL && a.ScopeCheck {
			return true
		}
	}
	return false
}

// AskHint is what a refusal of sv adds when the agent could ask a human
// for the URL instead (asks: AsksOutside of the manifest): that navigate
// would put it to one. "" when it could not.
func AskHint(asks bool, sv scope.Verdict) string {
	if !asks || !sv.Ask || sv.Allowed {
		return ""
	}
	return "; a human can be asked for it: call navigate with that URL and it waits for an approval ([browser.scope] ask_external)"
}

// NotAskable ends the refusal of a navigate, under a scope that asks
// about hosts outside allowed_domains, to a URL it did not mark askable:
// the agent learns that no human will be asked, and why.
const NotAskable = "; no human is asked about it: ask_external holds only a navigate to a public host outside allowed_domains, on an allowed port, and never one to a blocked domain, a single-label or special-use name (.local, .internal, .onion and the like), a cloud metadata name, or a private, loopback, link-local or metadata address"

// outside judges a navigate's url argument the scope refused with Ask set:
// it is held for a human (nil), or, when no approval could admit it, the
// refusal.
func (v *Verdict) outside(q *Question, arg, u string, sv scope.Verdict) *DenyError {
	o, err := scope.OriginOf(sv.URL)
	if err != nil {
		// Only an http(s) URL has an origin an approval can cover.
		return Deny(evidence.StageScope, sv.Rule, "argument %q: %s, and it has no http or https origin a human could approve: %v", arg, sv.Reason, err)
	}
	v.Outside = &Outside{URL: sv.URL, Origin: o, Reason: sv.Reason}
	v.ScopeRule, v.Target = sv.Rule, u
	if !q.Approved {
		v.Approval = append(v.Approval, fmt.Sprintf("navigate to %s leaves the scope: %s (once approved, %s reachable for this session)", sv.URL, sv.Reason, originsPhrase(AdmittedOrigins(o))))
	}
	return nil
}

// AdmittedOrigins are the origins an approval of a navigate to o opens:
// o, and for http on its default port the same host's https on its
// default port too. Chromium upgrades an http navigation to https by
// itself (HTTPS-Upgrades), so an approval of http://H alone would let the
// browser land where the gate refuses it; the upgrade reaches the same
// host, on a stronger scheme, and so is what the human approved. Another
// port keeps to its own origin (an HSTS host Chromium upgrades on the same
// port is then refused: it fails safe), and so does an IP address, which
// Chromium does not upgrade.
func AdmittedOrigins(o scope.Origin) []scope.Origin {
	if _, err := netip.ParseAddr(strings.Trim(o.Host, "[]")); err == nil {
		return []scope.Origin{o}
	}
	if o.Scheme == "http" && o.Port == 80 {
		return []scope.Origin{o, {Scheme: "https", Host: o.Host, Port: 443}}
	}
	return []scope.Origin{o}
}

// originsPhrase is the origins an approval opens, as a hold message says
// them: "X is" or "X (and its https upgrade Y) are".
func originsPhrase(os []scope.Origin) string {
	if len(os) == 1 {
		return os[0].String() + " is"
	}
	return fmt.Sprintf("%s (and its https upgrade %s) are", os[0], os[1])
}

// OutsideOrigins are the origins outside allowed_domains that a human
// approved a navigate to, in one session: its pages may reach them until
// the session ends. Safe for concurrent use: the request guard and the
// egress proxy consult it for every request.
type OutsideOrigins struct {
	mu sync.RWMutex
	m  map[scope.Origin]string // the origin -> the approval that admitted it
}

// Add makes o reachable for the session, as approval id admitted it.
func (a *OutsideOrigins) Add(o scope.Origin, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[scope.Origin]string{}
	}
	if _, ok := a.m[o]; !ok {
		a.m[o] = id
	}
}

// approval is the approval that admitted o ("" when none did).
func (a *OutsideOrigins) approval(o scope.Origin) string {
	if a == nil {
		return ""
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.m[o]
}

// Check wraps check so that it also allows a URL of an approved origin,
// and nothing else: only a verdict the scope marked askable (a public host
// outside allowed_domains, on an allowed port) is lifted, and only for the
// URL's very origin. The verdict keeps Ask set: it is still outside
// allowed_domains.
func (a *OutsideOrigins) Check(check URLCheck) URLCheck {
	return func(u string) scope.Verdict {
		v := check(u)
		if v.Allowed || !v.Ask {
			return v
		}
		o, err := scope.OriginOf(u)
		if err != nil {
			return v
		}
		if id := a.approval(o); id != "" {
			return approvedVerdict(v, o, id)
		}
		return v
	}
}

// CheckHost lifts a proxy's verdict on host:port (the scope's CheckHost)
// when an approved origin has that host and port, of either scheme: a
// proxy sees no scheme, and request interception has held each http(s)
// URL to its origin before the browser asked the proxy. A WebSocket,
// which interception does not see, reaches the approved host and port by
// this lift too: the same server, on the same port.
func (a *OutsideOrigins) CheckHost(v scope.Verdict) scope.Verdict {
	if a == nil || v.Allowed || !v.Ask {
		return v
	}
	for _, scheme := range []string{"https", "http"} {
		o := scope.Origin{Scheme: scheme, Host: v.Host, Port: v.Port}
		if id := a.approval(o); id != "" {
			return approvedVerdict(v, o, id)
		}
	}
	return v
}

// RuleApprovedOrigin is the rule of a verdict an approved origin lifted:
// `approved origin "https://news.example.org:443"`.
const RuleApprovedOrigin = "approved origin"

func approvedVerdict(v scope.Verdict, o scope.Origin, id string) scope.Verdict {
	v.Allowed = true
	v.Rule = fmt.Sprintf("%s %q", RuleApprovedOrigin, o.String())
	v.Reason = fmt.Sprintf("host %s is outside allowed_domains, and approval %s admitted %s for this session", v.Host, id, o)
	return v
}

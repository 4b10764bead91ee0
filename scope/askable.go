package scope

import (
	"net/netip"
	"strings"
)

// A human is asked (Config.AskExternal) only about a host that names a
// public site: what the operator reads in the approval is the name, and an
// approval of a name that only a local resolver, a cloud's internal DNS or
// the search list of /etc/resolv.conf can answer would open whatever that
// resolver points at. So besides blocked domains and non-global addresses,
// these names are never askable:
//
//   - a single-label name ("intranet", "metadata", "instance-data"): the
//     system resolver completes it with the search domains;
//   - the special-use and private-use top-level names, which public DNS does
//     not answer (RFC 6761, RFC 6762, RFC 7686, RFC 8375, RFC 9476 and the
//     names networks use privately): .local, .internal, .arpa (and so
//     .home.arpa), .onion, .alt, .invalid, .example, .lan, .home, .corp,
//     .intranet, .private;
//   - the clouds' instance-metadata names that sit under public domains.
//
// .test (RFC 6761) stays askable: public DNS answers no .test name either,
// so one reaches anything only by the operator's own mapping (a hosts file,
// serve --resolve), and test setups use .test names for "a public site".
// The example.com, example.net and example.org domains are real public
// names and stay askable too. Whatever a name is, an approved host is
// dialled only at a globally reachable address (egress,
// RuleApprovedNotGlobal): the names below are refused before anyone is
// asked, not the only guard.

// specialUseTLDs are the top-level names no approval may cover.
var specialUseTLDs = []string{
	"local", "internal", "arpa", "onion", "alt", "invalid", "example",
	"lan", "home", "corp", "intranet", "private", "localdomain",
}

// metadataNames are cloud instance-metadata host names under public
// domains (those under .internal, and single-label ones, are refused as
// such).
var metadataNames = []string{
	"metadata.goog",
	"metadata.tencentyun.com",
	"metadata.packet.net",
	"metadata.platformequinix.com",
}

// unaskableName says why no human may be asked about a canonical host name
// ("" when one may). IP literals are judged by their address class instead.
func unaskableName(host string) string {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ""
	}
	for _, n := range metadataNames {
		if host == n || strings.HasSuffix(host, "."+n) {
			return "it is a cloud instance-metadata name"
		}
	}
	dot := strings.LastIndexByte(host, '.')
	if dot < 0 {
		return "it is a single-label name, which the system resolver completes with its search domains"
	}
	tld := host[dot+1:]
	for _, s := range specialUseTLDs {
		if tld == s {
			return "." + tld + " is a special-use or private-use name that public DNS does not answer"
		}
	}
	return ""
}

// askable reports whether the scope would put a navigate to host (canonical;
// ip its address when it is an IP literal) to a human, ports aside: the
// scope asks about hosts outside allowed_domains, and host is not blocked,
// not in allowed_domains, not a localhost name or special-use name, and, as
// an address, globally reachable.
// judgeHost marks a verdict Ask by it (and by the port); DomainSets puts
// the host in "ask_external" by it, so that no policy can permit an
// approved navigate to a host judgeHost never holds. why is the reason a
// name is not askable, when that is the cause.
func (s *Scope) askable(host string, ip netip.Addr) (ok bool, why string) {
	if !s.askExternal || s.allowExternal || firstMatch(s.blocked, host) != nil || firstMatch(s.allowed, host) != nil {
		return false, ""
	}
	if isLocalhost(host) {
		return false, ""
	}
	if ip.IsValid() {
		return Classify(ip).Global, ""
	}
	if why := unaskableName(host); why != "" {
		return false, why
	}
	return true, ""
}

package main

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// The posture of a configuration: the risky choices check and doctor warn
// about, and the decision matrix of check --matrix. Nothing here is an
// error (serve runs such a set); each warning says what the choice lets
// happen, so that it is made knowingly.

// serveChoices are the serve flags doctor weighs (check knows none).
type serveChoices struct {
	known      bool // doctor: the flags below were given as serve would get them
	http       string
	signingKey bool
	agents     *toolclad.Agents
	operators  *toolclad.Operators
	root       bool // the daemon runs as root: Chromium without its sandbox
}

// postureWarnings are the warnings for a loaded set.
func postureWarnings(ms []*toolclad.Manifest, engine *cedar.Engine, sc serveChoices) []string {
	var out []string
	warn := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, m := range ms {
		b := m.Browser
		if b.Connect == "live" {
			what := "a browser you run, in a fresh context per session"
			if b.Context == toolclad.ContextUser {
				what = "your own browser context: your cookies and sign-ins, and no egress proxy"
			}
			warn("%s: live mode (connect = \"live\", %s): sessions act in %s", m.Path, b.LiveEndpoint, what)
		}
		if b.Scope.AllowExternal {
			warn("%s: allow_external = true: the agent may go to any public site not blocked", m.Path)
		}
		for _, c := range b.Scope.AllowPrivateCIDRs {
			if p, err := netip.ParsePrefix(c); err == nil && wideGrant(p) {
				warn("%s: allow_private_cidrs %q grants %s: internal services in it are in reach", m.Path, c, span(p))
			}
		}
		for _, d := range b.Scope.AllowedDomains {
			if d == "*" || (strings.HasPrefix(d, "*.") && !strings.Contains(d[2:], ".")) {
				warn("%s: allowed_domains %q takes in every site%s", m.Path, d, map[bool]string{true: "", false: " under a top-level domain"}[d == "*"])
			}
		}
		who := principals(sc.agents)
		for _, name := range []string{"execute_js", "submit_form"} {
			c := m.Command(name)
			if c == nil || c.HumanApproval {
				continue
			}
			if where := unapproved(m, c, engine, who); where != "" {
				warn("%s: %s can run without a human's approval (%s): the manifest does not ask for one, and the policies do not there", m.Path, toolclad.ToolName(m, c, "."), where)
			}
		}
		for _, c := range m.Commands {
			if !everPermitted(m, c, engine, who) {
				warn("%s: no policy permits %s on a page in the scope for %s, even with a human's approval (signed in or not, sample arguments): the command can never run",
					m.Path, toolclad.ToolName(m, c, "."), whoText(who))
			}
		}
	}
	out = append(out, policyLiterals(ms, engine)...)
	if sc.known {
		if sc.http != "" {
			if host, _, err := splitHost(sc.http); err == nil && !loopbackHost(host) {
				warn("--http %s listens beyond this machine (TLS is required there): agents' and operators' tokens guard it", sc.http)
			}
		}
		if !sc.signingKey {
			warn("no --signing-key: the evidence heads are not signed, so a tail cut off or rewritten with its head is not detected")
		}
		if sc.root {
			warn("running as root: Chromium is launched without its sandbox (it refuses it as root); run serve as a dedicated user (examples/browsergate.service)")
		}
	}
	return out
}

// wideGrant reports whether a private grant spans more than a small
// network: IPv4 shorter than /16, IPv6 shorter than /48.
func wideGrant(p netip.Prefix) bool {
	if p.Addr().Is4() {
		return p.Bits() < 16
	}
	return p.Bits() < 48
}

func span(p netip.Prefix) string {
	if p.Bits() == 0 {
		return "every address"
	}
	return fmt.Sprintf("a /%d (%s)", p.Bits(), p.Masked())
}

// principal is a Cedar principal the checks decide for: an agent of the
// agents file with its groups, or the stdio principal.
type principal struct {
	id     string
	groups []string
}

// principals are the agents of the file (doctor with --agents), else the
// stdio agent.
func principals(as *toolclad.Agents) []principal {
	if as == nil {
		return []principal{{id: "local"}}
	}
	var out []principal
	for _, id := range as.IDs() {
		out = append(out, principal{id: id, groups: as.GroupsOf(id)})
	}
	return out
}

func whoText(who []principal) string {
	if len(who) == 1 && who[0].id == "local" {
		return "the stdio agent"
	}
	return "any agent of the agents file"
}

// variants are the pages the checks try: signed in or not, with forms or
// not.
var variants = []struct {
	auth, forms bool
	text        string
}{{false, false, "not signed in"}, {false, true, "not signed in, with a form"}, {true, false, "signed in"}, {true, true, "signed in, with a form"}}

// unapproved says where (which agent, which page) Cedar permits the
// command without a human's approval ("": nowhere).
func unapproved(m *toolclad.Manifest, c *toolclad.Command, engine *cedar.Engine, who []principal) string {
	for _, p := range who {
		for _, v := range variants {
			r := matrixRequest(m, c, false)
			r.Principal, r.Groups = p.id, p.groups
			r.PageState["is_authenticated"], r.PageState["has_forms"] = v.auth, v.forms
			if engine.Decide(r).Allowed {
				return fmt.Sprintf("for %s, on a page in the scope %s", p.id, v.text)
			}
		}
	}
	return ""
}

// everPermitted reports whether any policy permits the command, approved,
// for one of who, on a page in the scope, signed in or not, with forms or
// not.
func everPermitted(m *toolclad.Manifest, c *toolclad.Command, engine *cedar.Engine, who []principal) bool {
	for _, p := range who {
		for _, v := range variants {
			r := matrixRequest(m, c, true)
			r.Principal, r.Groups = p.id, p.groups
			r.PageState["is_authenticated"], r.PageState["has_forms"] = v.auth, v.forms
			if engine.Decide(r).Allowed {
				return true
			}
		}
	}
	return false
}

// matrixDecision is Cedar's decision on the command on a page in the
// scope, not signed in, approved by a human or not, with its reasons.
func matrixDecision(m *toolclad.Manifest, c *toolclad.Command, engine *cedar.Engine, approved bool) (string, bool) {
	d := engine.Decide(matrixRequest(m, c, approved))
	return strings.Join(d.Reasons, "; "), d.Allowed
}

// matrixRequest is the Cedar request of a call of c with sample arguments
// on a page in m's scope (its first allowed domain), as the executor
// sends it, for the stdio agent.
func matrixRequest(m *toolclad.Manifest, c *toolclad.Command, approved bool) *cedar.Request {
	url := "https://" + scopeSample(m) + "/"
	sc := m.Scope()
	host := sc.Check(url).Host
	counters := map[string]int{"session_submit_count": 0}
	for _, name := range cedar.BuiltinCommands {
		counters["session_"+name+"_count"] = 0
	}
	return &cedar.Request{
		Principal: "local", Action: m.Tool.Cedar.Action, ResourceType: m.Tool.Cedar.Resource, Session: "check",
		Tool: m.Tool.Name, Command: c.Name, Args: sampleArgs(c.Name), URL: url, URLDomain: host,
		DomainSets: sc.DomainSets(host),
		PageState: map[string]any{"url": url, "title": "", "domain": host, "has_forms": false,
			"is_authenticated": false, "page_loaded": true, "tab_count": 1},
		RiskTier: c.RiskTier, HumanApproved: approved, Counters: counters,
	}
}

// scopeSample is a host inside the manifest's scope: its first allowed
// domain (www. under a wildcard), else example.com.
func scopeSample(m *toolclad.Manifest) string {
	for _, d := range m.Browser.Scope.AllowedDomains {
		if d == "*" {
			continue
		}
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			return "www." + rest
		}
		return d
	}
	return "example.com"
}

var (
	domainSetLiteral = regexp.MustCompile(`Web::DomainSet::"((?:[^"\\]|\\.)*)"`)
	// resource.command == "x", "x" == resource.command, or
	// ["x", "y"].contains(resource.command)
	commandLiteral = regexp.MustCompile(`\.command\s*==\s*"((?:[^"\\]|\\.)*)"|"((?:[^"\\]|\\.)*)"\s*==\s*resource\.command|\[([^\]]*)\]\s*\.contains\(\s*resource\.command\s*\)`)
	quoted         = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// policyLiterals warns of names in the policies that nothing matches: a
// domain set no manifest defines (its test is always false) and a command
// that is not a built-in (a permit for it never applies, a forbid never
// stops anything).
func policyLiterals(ms []*toolclad.Manifest, engine *cedar.Engine) []string {
	sets := map[string]bool{"allowed": true, "blocked": true, scope.SetAskExternal: true} // ask_external: filled by the scope when a manifest asks
	for _, m := range ms {
		for name := range m.Browser.Scope.DomainSets {
			sets[name] = true
		}
	}
	var out []string
	sources := engine.Sources()
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		src := withoutComments(string(sources[name]))
		seen := map[string]bool{}
		for _, at := range domainSetLiteral.FindAllStringSubmatchIndex(src, -1) {
			set := src[at[2]:at[3]]
			if !sets[set] && !seen["set "+set] {
				seen["set "+set] = true
				out = append(out, fmt.Sprintf("%s:%d: Web::DomainSet::%q is defined by no manifest (domain_sets): a domain is never in it", name, lineOf(src, at[0]), set))
			}
		}
		for _, at := range commandLiteral.FindAllStringSubmatchIndex(src, -1) {
			var cmds []string
			switch {
			case at[2] >= 0:
				cmds = []string{src[at[2]:at[3]]}
			case at[4] >= 0:
				cmds = []string{src[at[4]:at[5]]}
			default:
				for _, q := range quoted.FindAllStringSubmatch(src[at[6]:at[7]], -1) {
					cmds = append(cmds, q[1])
				}
			}
			for _, c := range cmds {
				if !slices.Contains(cedar.BuiltinCommands, c) && !seen["cmd "+c] {
					seen["cmd "+c] = true
					out = append(out, fmt.Sprintf("%s:%d: command %q is not a built-in command: no call has it", name, lineOf(src, at[0]), c))
				}
			}
		}
	}
	return out
}

func lineOf(src string, at int) int { return strings.Count(src[:at], "\n") + 1 }

// withoutComments blanks the // comments of Cedar source (outside string
// literals), keeping every other byte where it was.
func withoutComments(src string) string {
	b := []byte(src)
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// splitHost splits host:port.
func splitHost(addr string) (string, string, error) { return net.SplitHostPort(addr) }

// loopbackHost reports whether a listening host is loopback.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// sampleArgs are typed sample values of the command's arguments (policies
// that read resource.args see one), or none.
func sampleArgs(command string) map[string]any {
	if a := toolclad.ArgSamples()[command]; a != nil {
		return a
	}
	return map[string]any{}
}

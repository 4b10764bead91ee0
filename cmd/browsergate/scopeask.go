package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// askSampleHost is a public host outside any sane scope, that check asks
// the policies about on a manifest's behalf: would an approved navigate
// to a host outside allowed_domains be permitted? (Not under .example,
// a special-use name the scope never asks about.)
const askSampleHost = "outside-the-scope.example.com"

// describeAskExternal is check's account of [browser.scope] ask_external:
// what is asked about, what an approval leaves reachable, and what is
// never asked about.
func describeAskExternal(w io.Writer, m *toolclad.Manifest) {
	if !m.Browser.Scope.AskExternal {
		return
	}
	fmt.Fprintf(w, "  ask_external: a navigate to a public host outside allowed_domains waits for a human's approval (browsergate approvals,\n"+
		"    the console); approved, its origin (scheme, host, port) is reachable by the session's pages until the session ends (an\n"+
		"    http URL of a host name on port 80 also opens the same host's https on 443, where Chromium upgrades it), and nothing\n"+
		"    else is, and only at globally reachable addresses; each navigate outside allowed_domains is asked about\n"+
		"    again; blocked_domains, ports outside allowed_ports, single-label, special-use and cloud metadata names (.local,\n"+
		"    .internal, .onion, ...) and private, loopback, link-local and metadata addresses are refused at once and never asked about\n")
}

// askExternalWarnings are check's and doctor's warnings about an
// ask_external that can never ask, or whose approvals the policies
// would refuse anyway.
func askExternalWarnings(ms []*toolclad.Manifest, engine *cedar.Engine) []string {
	var out []string
	for _, m := range ms {
		if !m.Browser.Scope.AskExternal {
			continue
		}
		if !gate.AsksOutside(m) {
			out = append(out, fmt.Sprintf("%s: ask_external = true, but navigate is not declared with a scope-checked url (the browserless engine has no navigate): no call can ever be put to a human", m.Path))
			continue
		}
		url := "https://" + askSampleHost + "/"
		sv := m.Scope().Check(url)
		if !sv.Ask {
			continue // the sample host is blocked: nothing to ask the policies
		}
		r := matrixRequest(m, m.Command("navigate"), true)
		r.URL, r.URLDomain, r.DomainSets = url, sv.Host, m.Scope().DomainSets(sv.Host)
		r.Args = map[string]any{"url": url}
		if d := engine.Decide(r); !d.Allowed {
			out = append(out, fmt.Sprintf("%s: ask_external = true, but the policies deny a navigate outside allowed_domains even when a human approved it (%s): permit it for Web::DomainSet::\"ask_external\" with human_approved, as policies/navigate.cedar's navigate-approved-outside-scope does, or every such navigate is refused without asking",
				m.Path, strings.Join(append(d.Reasons, d.Errors...), "; ")))
		}
	}
	return out
}

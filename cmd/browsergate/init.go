package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/browsergate/browsergate/scope"
)

var initCommand = &command{
	name:       "init",
	synopsis:   "URL [--dir DIR]",
	positional: 1,
	summary: "Write a starter manifest (DIR/NAME.toml) and policy directory (DIR/policies/NAME.cedar) for the site at URL:\n" +
		"its host is the scope, low-risk commands are declared, high-risk ones are there commented out, and the comments\n" +
		"explain each part (docs/manifest.md is the reference). Existing files are never overwritten. check accepts the\n" +
		"result with no warning, and serve runs it.",
	setup: func(fs *flag.FlagSet) action {
		dir := fs.String("dir", ".", "the `DIR` to write the manifest and its policies directory in")
		return func(args []string, stdout, _ io.Writer) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: init needs the site's URL, like browsergate init https://example.test", errUsage)
			}
			return initSite(args[0], *dir, stdout)
		}
	},
}

// errExists marks an init that would overwrite a file: it writes nothing.
var errExists = errors.New("already exists")

// starterSite is what init reads from the URL it is given.
type starterSite struct {
	url    string // as given
	origin string // scheme://host[:port]
	name   string // the tool's name, from the host
	scheme string // http or https
	host   string // canonical, as allowed_domains takes it
	grants []string
	ports  []string // allowed_ports when the URL's port is not its scheme's default
}

// toolNameRE is what a tool name may hold (toolclad's own rule).
var toolNameRE = regexp.MustCompile(`[^a-z0-9_]+`)

// readStarterSite reads the site init writes for, refusing what is not an
// http(s) URL with a host.
func readStarterSite(raw string) (*starterSite, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: init: %q is not an http or https URL with a host (like https://example.test)", errUsage, raw)
	}
	host, err := scope.CanonicalHost(u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("%w: init: host %q of %s: %v", errUsage, u.Hostname(), raw, err)
	}
	s := &starterSite{url: raw, origin: u.Scheme + "://" + u.Host, scheme: u.Scheme, host: host}
	// The tool's name is the host's, as a tool name may spell it
	// (www.example.com: www_example_com); an address names nothing, so its
	// tool is "site".
	s.name = strings.Trim(toolNameRE.ReplaceAllString(s.host, "_"), "_")
	if s.name == "" || s.name[0] < 'a' || s.name[0] > 'z' {
		s.name = "site"
	}
	// Loopback and private addresses are refused unless granted: a site on
	// this machine or the local network needs its address granted, or no
	// page of it would load. The grant names the site's port only: another
	// server on the same address (a database's admin page, a dev tool) is
	// not the site.
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	switch ip, err := netip.ParseAddr(strings.Trim(s.host, "[]")); {
	case err == nil && scope.IsMetadata(ip):
		return nil, fmt.Errorf("%w: init: %s is a cloud metadata address, which no manifest may let a browser reach", errUsage, s.host)
	case err == nil && !scope.Classify(ip).Global:
		s.grants = []string{netip.PrefixFrom(ip, ip.BitLen()).String() + " ports " + port}
	case err != nil && scope.IsLocalhost(s.host):
		s.grants = []string{"127.0.0.1/32 ports " + port, "::1/128 ports " + port}
	case u.Port() != "" && u.Port() != map[string]string{"http": "80", "https": "443"}[u.Scheme]:
		s.ports = []string{"80", "443", u.Port()}
	}
	return s, nil
}

// initSite writes the starter manifest and policies for raw into dir,
// refusing, before it writes anything, when either file exists.
func initSite(raw, dir string, stdout io.Writer) error {
	s, err := readStarterSite(raw)
	if err != nil {
		return err
	}
	manifest := filepath.Join(dir, s.name+".toml")
	policies := filepath.Join(dir, "policies")
	policy := filepath.Join(policies, s.name+".cedar")
	for _, p := range []string{manifest, policy} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("init: %s %w: init never overwrites a file (move it away, or give another --dir)", p, errExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("init: %w", err)
		}
	}
	if err := os.MkdirAll(policies, 0o755); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	for _, f := range []struct{ path, body string }{{manifest, starterManifest(s)}, {policy, starterPolicies(s)}} {
		// O_EXCL: a file made since the check above is not overwritten either.
		if err := writeNew(f.path, []byte(f.body), 0o644); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("init: %s %w: init never overwrites a file", f.path, errExists)
			}
			return fmt.Errorf("init: %w", err)
		}
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n\nnext:\n", manifest, policy)
	fmt.Fprintf(stdout, "  browsergate check --manifest %s --policies %s --matrix\n", manifest, policies)
	fmt.Fprintf(stdout, "  browsergate serve --manifest %s --policies %s --evidence %s\n",
		manifest, policies, filepath.Join(dir, s.name+"-evidence.db"))
	fmt.Fprintln(stdout, "(docs/getting-started.md goes on from here: attaching a client, approvals, the evidence)")
	return nil
}

func quotedList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// starterManifest is init's manifest for s.
func starterManifest(s *starterSite) string {
	var scopeLines strings.Builder
	if len(s.grants) == 0 {
		fmt.Fprintf(&scopeLines, "# Add hosts the site needs (a CDN, a sign-in domain), or \"*.%s\" for its subdomains.\n", s.host)
	}
	fmt.Fprintf(&scopeLines, "allowed_domains = %s\n", quotedList([]string{s.host}))
	if len(s.grants) > 0 {
		fmt.Fprintf(&scopeLines, "# %s is a loopback or private address, which is refused unless granted here,\n"+
			"# at the site's port only: list more (\"ports 8000,8001\"), or drop \" ports …\" to grant\n"+
			"# every port of the address. A site on the internet needs no grant.\n"+
			"allow_private_cidrs = %s\n", s.host, quotedList(s.grants))
	}
	if len(s.ports) > 0 {
		fmt.Fprintf(&scopeLines, "# Hosts are reached on ports 80 and 443 only, unless listed here.\nallowed_ports = %s\n", quotedList(s.ports))
	}
	return fmt.Sprintf(`# %[1]s.toml: a governed browser for %[2]s, written by browsergate init.
#
# A ToolClad manifest says what an agent may do: which sites the browser may
# reach ([browser.scope]) and which commands exist ([browser.commands.*]).
# A command that is not declared does not exist for the agent. Every key is
# in docs/manifest.md; check your changes with
#   browsergate check --manifest %[1]s.toml --policies policies --matrix

[tool]
# The tools are published as %[1]s.navigate, %[1]s.snapshot, ...
name = %[1]q
version = "0.1.0"
mode = "browser"
description = "A governed browser for %[2]s"
timeout_seconds = 60    # the longest one call may take

[browser]
connect = "launch"      # start a headless Chromium of our own ("live" attaches to yours: docs/live-mode.md)
headless = true
max_interactions = 200  # calls per session

# The scope: the only hosts the browser may reach, for the agent's navigate
# and for every request the pages make (redirects, scripts, images, forms).
[browser.scope]
%[3]s
# Reading the page. snapshot gives the page as text with a ref (e12) on every
# element the agent can act on; click, type_text and the others take those
# refs (or a CSS selector).
[browser.commands.navigate]
description = "Open a page of %[2]s."
args.url = { type = "url", schemes = [%[4]q], scope_check = true }

[browser.commands.snapshot]
[browser.commands.read]
[browser.commands.screenshot]
[browser.commands.wait_for]
[browser.commands.scroll]
[browser.commands.go_back]
[browser.commands.go_forward]
[browser.commands.reload]
[browser.commands.list_tabs]
[browser.commands.switch_tab]

# Acting on the page. Each command is declared with its whole built-in
# signature; args narrow it (types, patterns, enums, bounds: docs/manifest.md).
[browser.commands.click]
[browser.commands.hover]
[browser.commands.type_text]
[browser.commands.press_key]
[browser.commands.select_option]

# Higher-risk commands, off until you uncomment them. The policies in
# policies/%[1]s.cedar hold submit_form and execute_js for a human's
# approval; risk_tier is what policies read of a command (low unless said).
#
# [browser.commands.submit_form]    # sends a form: a human approves each one
# risk_tier = "high"
#
# [browser.commands.execute_js]     # runs any script in the page
# risk_tier = "critical"
#
# [browser.commands.download]       # saves files into download_dir (it must exist)
# risk_tier = "medium"
# [browser.files]
# download_dir = "downloads"

# A sign-in. Declare the password as a secret: the agent types the
# placeholder <APP_PASSWORD> and never sees the value, which goes only to
# these domains (docs/secrets.md). A password the agent types itself is in
# the agent's context; the evidence and the logs mask it once it is typed.
#
# [secrets.APP_PASSWORD]
# env = "APP_PASSWORD"      # the variable serve reads it from (or: file = "password.txt")
# domains = [%[5]q]
`, s.name, s.origin, scopeLines.String(), s.scheme, s.host)
}

// starterPolicies is init's Cedar policy file for s.
func starterPolicies(s *starterSite) string {
	return fmt.Sprintf(`// %[1]s.cedar: who decides each call of %[1]s's tools, written by browsergate init.
//
// Cedar denies whatever no policy permits; a forbid wins over any permit; a
// forbid that ends in "unless { resource.human_approved == true }" is one a
// human's approval lifts, so browsergate holds such a call for a human
// instead of refusing it. The attributes a request carries are in
// docs/policies.md. This directory needs no schema: the one built into
// browsergate is used.

// Navigation only into the manifest's allowed_domains.
@id("%[1]s-navigate-in-scope")
permit (principal, action == Web::Action::"browse", resource)
when { resource.command == "navigate" && resource.url_domain in Web::DomainSet::"allowed" };

// Every other command the manifest declares.
@id("%[1]s-declared-commands")
permit (principal, action == Web::Action::"browse", resource)
when { resource.command != "navigate" };

// A form is sent only when a human says yes (submit_form, and a click on a
// submit button or a key press that submits a form, which are judged as
// submit_form).
@id("%[1]s-submit-needs-approval")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "submit_form" }
unless { resource.human_approved == true };

// Scripts and anything the manifest rates critical need a human's approval.
@id("%[1]s-critical-needs-approval")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "execute_js" || resource.risk_tier == "critical" }
unless { resource.human_approved == true };
`, s.name)
}

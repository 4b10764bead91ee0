package toolclad

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Remote is the [browser.remote] table (browsergate extension): where the
// sessions of a manifest with connect = "remote" get their browser, on
// hosts other than the daemon's. Every session's pages still reach the
// network only through the daemon's egress gate: its browser context is
// made with the gate as its proxy (serve --gate-listen).
type Remote struct {
	// Provider is how a browser is got: ProviderCDPURL (pool hosts'
	// DevTools endpoints, each browser shared by many sessions, each in a
	// browser context of its own), ProviderSelenium (a Selenium Grid 4
	// session per browsergate session, driven over its se:cdp endpoint)
	// or ProviderBrowserless.
	Provider string
	// Endpoints are the pool hosts' DevTools endpoints (ProviderCDPURL):
	// http(s) addresses (asked /json/version) or ws(s) browser URLs.
	Endpoints []string
	// URL is the Grid's or browserless's address (the other providers).
	URL string
	// CredentialsFile, absolute, holds what the provider wants to be let
	// in (user:password for a Grid's basic authentication, browserless's
	// token); it is read when a browser is acquired, never shown to an
	// agent, and must not be readable by other users.
	CredentialsFile string
	// PoolCIDRs are the pool's networks: no page reaches an address in
	// them, whatever the scope grants (a pool host's DevTools port drives
	// every browser on it).
	PoolCIDRs []netip.Prefix
}

// The remote providers.
const (
	ProviderCDPURL      = "cdp-url"
	ProviderSelenium    = "selenium"
	ProviderBrowserless = "browserless"
)

// decodeRemote reads [browser.remote], present exactly when connect =
// "remote".
func decodeRemote(t *table, m *Manifest) {
	b := &m.Browser
	if !t.has("remote") {
		if b.Connect == ConnectRemote {
			t.r.errorf(t.at("connect"), "\"remote\" needs a [browser.remote] table: the provider (%s), its endpoints or url, and pool_cidrs", quoteList(remoteProviders))
		}
		return
	}
	rt := t.sub("remote")
	if b.Connect != ConnectRemote {
		t.r.errorf(t.at("remote"), "is read only with connect = \"remote\" (connect is %q): remove the table or set connect = \"remote\"", b.Connect)
		return
	}
	r := &Remote{}
	if !rt.oneOf("provider", &r.Provider, remoteProviders...) && !rt.has("provider") {
		t.r.errorf(t.at("remote"), "needs provider: one of %s", quoteList(remoteProviders))
	}
	hasEndpoints := rt.strings("endpoints", &r.Endpoints)
	hasURL := rt.str("url", &r.URL)
	pools, poolsGood := decodePoolCIDRs(rt)
	switch r.Provider {
	case ProviderCDPURL:
		if hasURL {
			t.r.errorf(rt.at("url"), "is for the selenium and browserless providers: cdp-url takes endpoints, the pool hosts' DevTools endpoints")
		}
		if !hasEndpoints && !rt.has("endpoints") {
			t.r.errorf(t.at("remote"), "provider \"cdp-url\" needs endpoints: the pool hosts' DevTools endpoints, like [\"http://10.0.5.2:9223\"]")
		} else if hasEndpoints && len(r.Endpoints) == 0 {
			t.r.errorf(rt.at("endpoints"), "is empty: list the pool hosts' DevTools endpoints")
		}
		seen := map[string]bool{}
		for i, e := range r.Endpoints {
			at := rt.at("endpoints").index(i)
			if seen[e] {
				t.r.errorf(at, "%q is listed twice", e)
			}
			seen[e] = true
			if msg := checkRemoteURL(e, []string{"http", "https", "ws", "wss"}, pools); msg != "" {
				t.r.errorf(at, "%s", msg)
			}
		}
	case ProviderSelenium, ProviderBrowserless:
		if hasEndpoints {
			t.r.errorf(rt.at("endpoints"), "is for the cdp-url provider: %s takes url", r.Provider)
		}
		schemes := []string{"http", "https"}
		if r.Provider == ProviderBrowserless {
			schemes = []string{"ws", "wss", "http", "https"}
		}
		if !hasURL && !rt.has("url") {
			t.r.errorf(t.at("remote"), "provider %q needs url: the address of its %s", r.Provider, map[string]string{ProviderSelenium: "Grid (like \"http://10.0.5.2:4444\")", ProviderBrowserless: "service (like \"ws://10.0.5.2:3000\")"}[r.Provider])
		} else if msg := checkRemoteURL(r.URL, schemes, pools); hasURL && msg != "" {
			t.r.errorf(rt.at("url"), "%s", msg)
		} else if msg := checkServiceAddress(r.Provider, r.URL); hasURL && msg != "" {
			t.r.errorf(rt.at("url"), "%s", msg)
		}
	}
	if rt.str("credentials_file", &r.CredentialsFile) {
		if r.Provider == ProviderCDPURL {
			t.r.errorf(rt.at("credentials_file"), "is for the selenium and browserless providers: cdp-url reads none (a pool host's DevTools asks for no credentials; keep it on a network only the daemon reaches)")
		}
		r.CredentialsFile = checkCredentialsFile(rt, r.CredentialsFile)
	}
	if poolsGood {
		r.PoolCIDRs = pools
	}
	checkGrantsOutsidePool(t, m, pools)
	rt.done()
	b.Remote = r
}

// remoteProviders are the values of [browser.remote] provider.
var remoteProviders = []string{ProviderCDPURL, ProviderSelenium, ProviderBrowserless}

// decodePoolCIDRs reads pool_cidrs, which every remote manifest needs: the
// networks that parse, and whether all did (each wrong one is reported).
func decodePoolCIDRs(rt *table) ([]netip.Prefix, bool) {
	var entries []string
	if !rt.strings("pool_cidrs", &entries) {
		if !rt.has("pool_cidrs") {
			rt.r.errorf(rt.path, "needs pool_cidrs: the networks of the pool's hosts (like [\"10.0.5.0/24\"]), which no page may reach")
		}
		return nil, false
	}
	if len(entries) == 0 {
		rt.r.errorf(rt.at("pool_cidrs"), "is empty: list the networks of the pool's hosts")
		return nil, false
	}
	var out []netip.Prefix
	good := true
	for i, s := range entries {
		at := rt.at("pool_cidrs").index(i)
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			if a, aerr := netip.ParseAddr(strings.TrimSpace(s)); aerr == nil {
				p, err = a.Prefix(a.BitLen())
			}
		}
		switch {
		case err != nil:
			rt.r.errorf(at, "%q is not a network (like \"10.0.5.0/24\") or an address", s)
			good = false
		case p.Bits() == 0:
			rt.r.errorf(at, "%q is every address: pages could reach nothing; list the pool's own networks", s)
			good = false
		case p.Masked() != p:
			rt.r.errorf(at, "%q has host bits set: did you mean %q?", s, p.Masked().String())
			good = false
		default:
			out = append(out, p)
		}
	}
	return out, good
}

// checkRemoteURL judges an endpoint or provider URL: a scheme of schemes,
// and a host that is an address inside the pool's networks.
func checkRemoteURL(s string, schemes []string, pools []netip.Prefix) string {
	u, err := url.Parse(s)
	if err != nil || !strings.Contains(s, "://") {
		return fmt.Sprintf("%q is not a URL like \"%s://10.0.5.2:9223\"", s, schemes[0])
	}
	if !slices.Contains(schemes, u.Scheme) {
		return fmt.Sprintf("scheme %q is not one of %s", u.Scheme, quoteList(schemes))
	}
	if u.Hostname() == "" {
		return fmt.Sprintf("%q has no host", s)
	}
	if u.User != nil {
		return fmt.Sprintf("%q carries credentials in the URL: put them in credentials_file, which is never shown or logged", s)
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return fmt.Sprintf("host %s is a name: give the pool host's address, which is checked against pool_cidrs and connected to as it is (a name would be resolved apart from that check; Chromium's DevTools answers no Host header that is a name either)", u.Hostname())
	}
	if pools == nil {
		return ""
	}
	a = a.Unmap()
	for _, p := range pools {
		if p.Contains(a) {
			return ""
		}
	}
	return fmt.Sprintf("%s is outside pool_cidrs: a pool host's address must be in the pool's networks, which pages can never reach", a)
}

// checkServiceAddress refuses a browserless url that names more than the
// service: the daemon asks for its routes (/chromium, /devtools/browser,
// /sessions, /kill) itself, and a token in a query would be a secret in
// the manifest, shown by check and logged with the url.
func checkServiceAddress(provider, s string) string {
	u, err := url.Parse(s)
	if provider != ProviderBrowserless || err != nil {
		return ""
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Sprintf("%q has a query: give browserless's address only (like \"ws://10.0.5.2:3000\"), and its token in credentials_file, which is never shown or logged", s)
	}
	if u.Path != "" && u.Path != "/" {
		return fmt.Sprintf("%q has a path: give browserless's address only (like \"ws://10.0.5.2:3000\"); the daemon asks for /chromium itself", s)
	}
	return ""
}

// checkCredentialsFile makes the path absolute (relative to the manifest)
// and checks that it is a regular file other users cannot read.
func checkCredentialsFile(rt *table, p string) string {
	if p == "" {
		rt.r.errorf(rt.at("credentials_file"), "must not be empty")
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(rt.r.file), p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		rt.r.errorf(rt.at("credentials_file"), "%v", err)
	case !fi.Mode().IsRegular():
		rt.r.errorf(rt.at("credentials_file"), "%s is not a regular file", p)
	case fi.Mode().Perm()&0o077 != 0:
		rt.r.errorf(rt.at("credentials_file"), "%s can be read by other users (mode %04o): chmod 600 it", p, fi.Mode().Perm())
	default:
		return filepath.Clean(p)
	}
	return ""
}

// checkGrantsOutsidePool refuses an allow_private_cidrs grant that lies
// wholly inside the pool's networks: it could never take effect, and a
// reader would believe pages reach the pool.
func checkGrantsOutsidePool(t *table, m *Manifest, pools []netip.Prefix) {
	for i, g := range m.Browser.Scope.AllowPrivateCIDRs {
		cidr, _, _ := strings.Cut(strings.TrimSpace(g), " ")
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			if a, aerr := netip.ParseAddr(cidr); aerr == nil {
				p, err = a.Prefix(a.BitLen())
			}
		}
		if err != nil {
			continue
		}
		for _, pool := range pools {
			if pool.Bits() <= p.Bits() && pool.Contains(p.Addr()) {
				t.r.errorf(t.at("scope").child("allow_private_cidrs").index(i),
					"%q is inside pool_cidrs %s: pages never reach the pool's networks, whatever the scope grants", g, pool)
			}
		}
	}
}

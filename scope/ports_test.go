package scope_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// testConfigWithPorts is a scope like browsergate's own: grants limited to
// the ports the test sites use, and its own listeners (DevTools on 9222, a
// proxy on every address at 9999) always denied.
var testConfigWithPorts = scope.Config{
	AllowedDomains:    []string{"*.example.com", "127.0.0.1", "[::1]", "localhost", "10.1.2.3", "8.8.8.8", "127.0.0.3"},
	BlockedDomains:    []string{"*.evil.com"},
	AllowPrivateCIDRs: []string{"127.0.0.1/32 ports 8080,8443", "::1/128 port 8080", "10.0.0.0/8 ports 80, 443", "127.0.0.3/32"},
	DenyAddrPorts: []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:9222"),
		netip.MustParseAddrPort("[::]:9999"),
		netip.MustParseAddrPort("127.0.0.3:5555"),
		netip.MustParseAddrPort("8.8.8.8:25"),
	},
}

const (
	g127   = `allow_private_cidrs "127.0.0.1/32 ports 8080,8443"`
	gLocal = `allow_private_cidrs "127.0.0.1/32 ports 8080,8443", "::1/128 port 8080"`
	devtl  = `deny_addr_ports "127.0.0.1:9222"`
	any999 = `deny_addr_ports "[::]:9999"`
)

func TestCheckPorts(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfigWithPorts)
	runCheck(t, s, []checkCase{
		{name: "granted port", url: "http://127.0.0.1:8080/", allowed: true, rule: g127, host: "127.0.0.1", class: "loopback"},
		{name: "second granted port", url: "https://127.0.0.1:8443/", allowed: true, rule: g127, host: "127.0.0.1", class: "loopback"},
		{name: "default port not granted", url: "http://127.0.0.1/", rule: "address class loopback", host: "127.0.0.1", class: "loopback"},
		{name: "https default port not granted", url: "https://127.0.0.1/", rule: "address class loopback", host: "127.0.0.1", class: "loopback"},
		{name: "devtools", url: "http://127.0.0.1:9222/json/version", rule: devtl, host: "127.0.0.1", class: "loopback"},
		{name: "devtools websocket", url: "ws://127.0.0.1:9222/devtools/browser/x", rule: devtl, host: "127.0.0.1", class: "loopback"},
		{name: "devtools decimal", url: "http://2130706433:9222/", rule: devtl, host: "127.0.0.1", class: "loopback"},
		{name: "devtools mapped", url: "http://[::ffff:127.0.0.1]:9222/", rule: devtl, host: "[::ffff:7f00:1]", class: "loopback"},
		{name: "devtools at unspecified address", url: "http://0.0.0.0:9222/json/version", rule: devtl, host: "0.0.0.0", class: "unspecified"},
		{name: "devtools at IPv6 unspecified address", url: "http://[::]:9222/", rule: devtl, host: "[::]", class: "unspecified"},
		{name: "devtools port on another loopback address", url: "http://127.0.0.3:9222/", allowed: true, rule: `allow_private_cidrs "127.0.0.3/32"`, host: "127.0.0.3", class: "loopback"},
		{name: "devtools port on IPv6 loopback", url: "http://[::1]:9222/", rule: "address class loopback", host: "[::1]", class: "loopback"},
		{name: "denied despite all-port grant", url: "http://127.0.0.3:5555/", rule: `deny_addr_ports "127.0.0.3:5555"`, host: "127.0.0.3", class: "loopback"},
		{name: "all-port grant", url: "http://127.0.0.3:1234/", allowed: true, rule: `allow_private_cidrs "127.0.0.3/32"`, host: "127.0.0.3", class: "loopback"},
		{name: "unspecified entry denies everywhere", url: "http://127.0.0.3:9999/", rule: any999, host: "127.0.0.3", class: "loopback"},
		{name: "unspecified entry denies IPv6", url: "http://[::1]:9999/", rule: any999, host: "[::1]", class: "loopback"},
		{name: "global address denied endpoint", url: "http://8.8.8.8:25/", rule: `deny_addr_ports "8.8.8.8:25"`, host: "8.8.8.8", class: "global"},
		{name: "global address other port", url: "http://8.8.8.8/", allowed: true, rule: `allowed_domains "8.8.8.8"`, host: "8.8.8.8", class: "global"},
		{name: "localhost granted port", url: "http://localhost:8080/", allowed: true, rule: gLocal, host: "localhost", class: "loopback"},
		{name: "localhost IPv6 lacks port", url: "http://localhost:8443/", rule: "address class loopback", host: "localhost", class: "loopback"},
		{name: "localhost devtools", url: "http://localhost:9222/", rule: devtl, host: "localhost", class: "loopback"},
		{name: "localhost any-address entry", url: "http://localhost:9999/", rule: any999, host: "localhost", class: "loopback"},
		{name: "IPv6 granted port", url: "http://[::1]:8080/", allowed: true, rule: `allow_private_cidrs "::1/128 port 8080"`, host: "[::1]", class: "loopback"},
		{name: "private granted default port", url: "http://10.1.2.3/", allowed: true, rule: `allow_private_cidrs "10.0.0.0/8 ports 80, 443"`, host: "10.1.2.3", class: "private"},
		{name: "private granted https", url: "https://10.1.2.3/", allowed: true, rule: `allow_private_cidrs "10.0.0.0/8 ports 80, 443"`, host: "10.1.2.3", class: "private"},
		{name: "private other port", url: "http://10.1.2.3:8080/", rule: "address class private", host: "10.1.2.3", class: "private"},
		{name: "domain on a port outside allowed_ports", url: "https://www.example.com:9222/", rule: scope.RuleAllowedPorts, host: "www.example.com"},
		{name: "domain on a default port", url: "https://www.example.com/", allowed: true, rule: `allowed_domains "*.example.com"`, host: "www.example.com"},
	})
	// The reason of a port-limited denial names the grant that fell short.
	v := s.Check("http://127.0.0.1/")
	if !strings.Contains(v.Reason, `allow_private_cidrs "127.0.0.1/32 ports 8080,8443" grants it only at the ports it lists, not at port 80`) ||
		strings.Contains(v.Reason, "no allow_private_cidrs entry contains it") || v.Port != 80 {
		t.Errorf("Check(http://127.0.0.1/) = %+v; want the port clause alone and Port 80", v)
	}
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfigWithPorts)
	tests := []struct {
		name    string
		host    string
		port    uint16
		allowed bool
		rule    string
		canon   string
	}{
		{"domain", "www.example.com", 443, true, `allowed_domains "*.example.com"`, "www.example.com"},
		{"domain canonicalised", "WWW.Example.COM.", 443, true, `allowed_domains "*.example.com"`, "www.example.com"},
		{"IDN canonicalised", "ｗｗｗ.example.com", 443, true, `allowed_domains "*.example.com"`, "www.example.com"},
		{"blocked", "x.evil.com", 443, false, `blocked_domains "*.evil.com"`, "x.evil.com"},
		{"not allowed", "example.net", 443, false, scope.RuleNotAllowed, "example.net"},
		{"granted loopback", "127.0.0.1", 8080, true, g127, "127.0.0.1"},
		{"loopback wrong port", "127.0.0.1", 80, false, "address class loopback", "127.0.0.1"},
		{"devtools", "127.0.0.1", 9222, false, devtl, "127.0.0.1"},
		{"legacy IPv4", "2130706433", 8080, true, g127, "127.0.0.1"},
		{"bare IPv6", "::1", 8080, true, `allow_private_cidrs "::1/128 port 8080"`, "[::1]"},
		{"bracketed IPv6", "[::1]", 8080, true, `allow_private_cidrs "::1/128 port 8080"`, "[::1]"},
		{"IPv6 any-address entry", "[::1]", 9999, false, any999, "[::1]"},
		{"localhost", "localhost", 8080, true, gLocal, "localhost"},
		{"localhost devtools", "LOCALHOST.", 9222, false, devtl, "localhost"},
		{"metadata", "169.254.169.254", 80, false, "address class metadata", "169.254.169.254"},
		{"metadata mapped", "::ffff:a9fe:a9fe", 80, false, "address class metadata", "[::ffff:a9fe:a9fe]"},
		{"canary", "127.0.0.2", 8080, false, "address class loopback", "127.0.0.2"},
		{"port zero", "www.example.com", 0, false, scope.RulePort, "www.example.com"},
		{"space", "a b", 80, false, scope.RuleParse, ""},
		{"empty", "", 80, false, scope.RuleParse, ""},
		{"with port", "www.example.com:443", 443, false, scope.RuleParse, ""},
		{"zone", "fe80::1%eth0", 80, false, scope.RuleParse, ""},
		{"IPv4 overflow", "256.0.0.1", 80, false, scope.RuleParse, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := s.CheckHost(tt.host, tt.port)
			if v.Allowed != tt.allowed || v.Rule != tt.rule || v.Host != tt.canon || v.Port != tt.port {
				t.Errorf("CheckHost(%q, %d) = %+v\nwant allowed=%v rule=%q host=%q", tt.host, tt.port, v, tt.allowed, tt.rule, tt.canon)
			}
			if v.Reason == "" || v.Host != "" && !strings.Contains(v.Reason, v.Host) {
				t.Errorf("CheckHost(%q, %d) reason %q does not name host %q", tt.host, tt.port, v.Reason, v.Host)
			}
		})
	}
	var nilScope *scope.Scope
	if v := nilScope.CheckHost("www.example.com", 443); v.Allowed || v.Rule != scope.RuleNilScope {
		t.Errorf("nil scope CheckHost = %+v", v)
	}
	empty := mustNew(t, scope.Config{AllowPrivateCIDRs: []string{"127.0.0.0/8"}})
	if v := empty.CheckHost("127.0.0.1", 80); v.Allowed || v.Rule != scope.RuleNoScope {
		t.Errorf("empty scope CheckHost = %+v", v)
	}
}

func TestCheckAddrPort(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfigWithPorts)
	tests := []struct {
		ap      string
		allowed bool
		rule    string
	}{
		{"93.184.216.34:443", true, "address class global"},
		{"[2606:4700::1111]:443", true, "address class global"},
		{"192.0.0.9:443", true, "address class anycast"},
		{"127.0.0.1:8080", true, g127},
		{"[::ffff:127.0.0.1]:8443", true, g127},
		{"127.0.0.1:80", false, "address class loopback"},
		{"127.0.0.1:9222", false, devtl},
		{"[::ffff:127.0.0.1]:9222", false, devtl},
		{"127.0.0.2:8080", false, "address class loopback"},
		{"[::1]:8080", true, `allow_private_cidrs "::1/128 port 8080"`},
		{"[::1]:9999", false, any999},
		{"10.9.9.9:443", true, `allow_private_cidrs "10.0.0.0/8 ports 80, 443"`},
		{"10.9.9.9:22", false, "address class private"},
		{"8.8.8.8:25", false, `deny_addr_ports "8.8.8.8:25"`},
		{"8.8.8.8:53", false, scope.RuleAllowedPorts},
		{"8.8.8.8:80", true, "address class global"},
		{"169.254.169.254:80", false, "address class metadata"},
		{"[fd00:ec2::254]:80", false, "address class metadata"},
		{"[64:ff9b::7f00:1]:8080", false, "address class loopback"},
		{"[2002:808:808::1]:80", false, "address class 6to4"},
		{"[64:ff9b::808:808]:80", true, "address class global"},
		{"1.1.1.1:0", false, scope.RulePort},
		{"[fe80::1%eth0]:80", false, "address class link-local"},
	}
	for _, tt := range tests {
		t.Run(tt.ap, func(t *testing.T) {
			t.Parallel()
			ap := netip.MustParseAddrPort(tt.ap)
			v := s.CheckAddrPort(ap)
			if v.Allowed != tt.allowed || v.Rule != tt.rule || v.Port != ap.Port() || !strings.Contains(v.Reason, v.Host) {
				t.Errorf("CheckAddrPort(%s) = %+v\nwant allowed=%v rule=%q", tt.ap, v, tt.allowed, tt.rule)
			}
		})
	}
	var nilScope *scope.Scope
	if v := nilScope.CheckAddrPort(netip.MustParseAddrPort("8.8.8.8:443")); v.Allowed || v.Rule != scope.RuleNilScope {
		t.Errorf("nil scope CheckAddrPort = %+v", v)
	}
	if v := s.CheckAddrPort(netip.AddrPort{}); v.Allowed {
		t.Errorf("CheckAddrPort(zero) = %+v, want a denial", v)
	}
}

// TestCheckAddrWithPortGrants shows CheckAddr failing closed: with no port
// known, only a grant for every port lifts the address-class block.
func TestCheckAddrWithPortGrants(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfigWithPorts)
	if v := s.CheckAddr(netip.MustParseAddr("127.0.0.1")); v.Allowed || !strings.Contains(v.Reason, "no port is known") {
		t.Errorf("CheckAddr(127.0.0.1) = %+v, want a denial naming the missing port", v)
	}
	if v := s.CheckAddr(netip.MustParseAddr("127.0.0.3")); !v.Allowed || v.Rule != `allow_private_cidrs "127.0.0.3/32"` {
		t.Errorf("CheckAddr(127.0.0.3) = %+v, want the all-port grant", v)
	}
}

func TestNewPortSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		entry string
		want  error
	}{
		{"all ports", "127.0.0.1/32", nil},
		{"one port", "127.0.0.1/32 port 8080", nil},
		{"plural one port", "127.0.0.1/32 ports 8080", nil},
		{"list", "10.0.0.0/8 ports 80,443", nil},
		{"list with spaces", "10.0.0.0/8 ports 80, 443 ,8080", nil},
		{"IPv6", "::1/128 port 8080", nil},
		{"keyword without ports", "127.0.0.1/32 port", scope.ErrInvalidCIDR},
		{"unknown keyword", "127.0.0.1/32 via 80", scope.ErrInvalidCIDR},
		{"port zero", "127.0.0.1/32 port 0", scope.ErrInvalidPort},
		{"port too big", "127.0.0.1/32 port 65536", scope.ErrInvalidPort},
		{"trailing comma", "127.0.0.1/32 ports 80,", scope.ErrInvalidPort},
		{"signed", "127.0.0.1/32 port +80", scope.ErrInvalidPort},
		{"range", "127.0.0.1/32 ports 80-90", scope.ErrInvalidPort},
		{"empty", "  ", scope.ErrInvalidCIDR},
		{"metadata", "169.254.169.254/32 port 80", scope.ErrMetadataGrant},
		{"host bits", "10.0.0.1/8 port 80", scope.ErrInvalidCIDR},
		{"address without length", "127.0.0.1", scope.ErrInvalidCIDR},
		{"IPv6 address without length", "::1 port 80", scope.ErrInvalidCIDR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := scope.New(scope.Config{AllowPrivateCIDRs: []string{tt.entry}})
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("New(%q) error = %v, want %v", tt.entry, err, tt.want)
			}
		})
	}
	for entry, hint := range map[string]string{"127.0.0.1": `did you mean "127.0.0.1/32"?`, "::1 port 80": `did you mean "::1/128"?`} {
		if _, err := scope.New(scope.Config{AllowPrivateCIDRs: []string{entry}}); err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("New(%q) error %v does not say %s", entry, err, hint)
		}
	}
	_, err := scope.New(scope.Config{DenyAddrPorts: []netip.AddrPort{{}, netip.MustParseAddrPort("127.0.0.1:0"), netip.MustParseAddrPort("127.0.0.1:9222")}})
	var ee *scope.EntryError
	if !errors.Is(err, scope.ErrInvalidPort) || !errors.As(err, &ee) || ee.Field != "deny_addr_ports" {
		t.Errorf("New with bad DenyAddrPorts: %v", err)
	}
	if n := strings.Count(err.Error(), "deny_addr_ports"); n != 2 {
		t.Errorf("New reported %d bad DenyAddrPorts entries, want 2: %v", n, err)
	}
}

// TestDefaultPortPolicy shows allowed_ports: 80 and 443 by default for every
// host a private grant does not cover, the manifest's list (ports and
// ranges) when it sets one, and grants keeping their own port lists.
func TestDefaultPortPolicy(t *testing.T) {
	t.Parallel()
	base := scope.Config{
		AllowedDomains:    []string{"*.example.com", "127.0.0.1", "8.8.8.8", "localhost"},
		AllowExternal:     true,
		AllowPrivateCIDRs: []string{"127.0.0.0/8", "::1/128"},
	}
	def := mustNew(t, base)
	custom := base
	custom.AllowedPorts = []string{"443", "8000-8999"}
	wide := mustNew(t, custom)
	tests := []struct {
		name    string
		s       *scope.Scope
		url     string
		allowed bool
		rule    string
	}{
		{"default http", def, "http://www.example.com/", true, `allowed_domains "*.example.com"`},
		{"default https", def, "https://www.example.com/", true, `allowed_domains "*.example.com"`},
		{"default explicit 80", def, "http://www.example.com:80/", true, `allowed_domains "*.example.com"`},
		{"default https on 80", def, "https://www.example.com:80/", true, `allowed_domains "*.example.com"`},
		{"default ssh", def, "http://www.example.com:22/", false, scope.RuleAllowedPorts},
		{"default smtp via external", def, "http://mail.example.net:25/", false, scope.RuleAllowedPorts},
		{"default 8443", def, "https://www.example.com:8443/", false, scope.RuleAllowedPorts},
		{"default wss", def, "wss://www.example.com/socket", true, `allowed_domains "*.example.com"`},
		{"default ws on 8080", def, "ws://www.example.com:8080/", false, scope.RuleAllowedPorts},
		{"default global literal", def, "http://8.8.8.8:53/", false, scope.RuleAllowedPorts},
		{"grant covers every port", def, "http://127.0.0.1:5432/", true, `allow_private_cidrs "127.0.0.0/8"`},
		{"localhost grant covers every port", def, "http://localhost:3000/", true, `allow_private_cidrs "127.0.0.0/8", "::1/128"`},
		{"custom range low", wide, "http://www.example.com:8000/", true, `allowed_domains "*.example.com"`},
		{"custom range high", wide, "http://www.example.com:8999/", true, `allowed_domains "*.example.com"`},
		{"custom range above", wide, "http://www.example.com:9000/", false, scope.RuleAllowedPorts},
		{"custom drops 80", wide, "http://www.example.com/", false, scope.RuleAllowedPorts},
		{"custom keeps 443", wide, "https://www.example.com/", true, `allowed_domains "*.example.com"`},
		// allow_external lets the host in, so only the port can refuse it.
		{"external host on 22", def, "http://evil.test:22/", false, scope.RuleAllowedPorts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := tt.s.Check(tt.url)
			if v.Allowed != tt.allowed || v.Rule != tt.rule {
				t.Fatalf("Check(%q) = %+v\nwant allowed=%v rule=%q", tt.url, v, tt.allowed, tt.rule)
			}
			if !tt.allowed && !strings.Contains(v.Reason, fmt.Sprintf("port %d", v.Port)) {
				t.Errorf("reason %q does not name port %d", v.Reason, v.Port)
			}
		})
	}
	if v := def.Check("http://www.example.com:22/"); !strings.Contains(v.Reason, "80, 443 (the default)") {
		t.Errorf("default denial %q does not say the default list", v.Reason)
	}
	if v := wide.Check("http://www.example.com/"); !strings.Contains(v.Reason, "443, 8000-8999;") {
		t.Errorf("custom denial %q does not list the manifest's ports", v.Reason)
	}
	// A host outside the scope is refused for that, not for its port.
	closed := mustNew(t, scope.Config{AllowedDomains: []string{"*.example.com"}})
	if v := closed.Check("http://other.test:22/"); v.Rule != scope.RuleNotAllowed {
		t.Errorf("out-of-scope host on 22: rule %q, want %q", v.Rule, scope.RuleNotAllowed)
	}
}

func TestParsePortRange(t *testing.T) {
	t.Parallel()
	good := map[string]scope.PortRange{"80": {80, 80}, "1": {1, 1}, "65535": {65535, 65535}, "8000-8999": {8000, 8999}, "1-65535": {1, 65535}, "443-443": {443, 443}}
	for in, want := range good {
		got, err := scope.ParsePortRange(in)
		if err != nil || got != want {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "65536", "-1", "80-", "-80", "9000-8000", "+80", " 80", "80 ", "0x50", "1e3", "80-90-100", "٨٠"} {
		if _, err := scope.ParsePortRange(in); !errors.Is(err, scope.ErrInvalidPort) {
			t.Errorf("ParsePortRange(%q) err = %v, want ErrInvalidPort", in, err)
		}
	}
	_, err := scope.New(scope.Config{AllowedDomains: []string{"a.test"}, AllowedPorts: []string{"443", "9000-8000"}})
	var ee *scope.EntryError
	if !errors.As(err, &ee) || ee.Field != "allowed_ports" || ee.Index != 1 || !strings.Contains(err.Error(), "8000-9000") {
		t.Errorf("New with a reversed range: %v", err)
	}
}

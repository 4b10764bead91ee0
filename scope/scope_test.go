package scope_test

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func mustNew(t testing.TB, cfg scope.Config) *scope.Scope {
	t.Helper()
	s, err := scope.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return s
}

// testConfig is a scope like the ones the integration tests use: sites on
// 127.0.0.1 are granted, and the canary on 127.0.0.2 is not.
var testConfig = scope.Config{
	AllowedDomains:    []string{"*.example.com", "docs.example.org", "127.0.0.1", "[::1]", "8.8.8.8", "10.1.2.3", "localhost"},
	BlockedDomains:    []string{"*.evil.com", "admin.*", "blocked.example.com"},
	AllowPrivateCIDRs: []string{"127.0.0.1/32", "::1/128", "10.0.0.0/8"},
}

type checkCase struct {
	name    string
	url     string
	allowed bool
	rule    string
	host    string
	class   string
}

func runCheck(t *testing.T, s *scope.Scope, tests []checkCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := s.Check(tt.url)
			if v.Allowed != tt.allowed || v.Rule != tt.rule || v.Host != tt.host || v.Class != tt.class {
				t.Errorf("Check(%q) = %+v\nwant allowed=%v rule=%q host=%q class=%q", tt.url, v, tt.allowed, tt.rule, tt.host, tt.class)
			}
			if v.Reason == "" {
				t.Errorf("Check(%q) has no reason", tt.url)
			}
			if v.Host != "" && !strings.Contains(v.Reason, v.Host) {
				t.Errorf("Check(%q) reason %q does not name host %q", tt.url, v.Reason, v.Host)
			}
			if v.Rule == scope.RuleParse && !strings.Contains(v.Reason, fmt.Sprintf("%q", tt.url)) {
				t.Errorf("Check(%q) parse reason %q does not name the input", tt.url, v.Reason)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfig)
	const (
		loop  = "address class loopback"
		g4    = `allow_private_cidrs "127.0.0.1/32"`
		glob  = `allowed_domains "*.example.com"`
		notIn = scope.RuleNotAllowed
	)
	runCheck(t, s, []checkCase{
		// 1. Parse.
		{name: "unparseable", url: "not a url", rule: scope.RuleParse},
		{name: "bad host", url: "http://exa mple.com/", rule: scope.RuleParse},
		{name: "IPv4 overflow", url: "http://256.0.0.1/", rule: scope.RuleParse},
		{name: "zone id", url: "http://[fe80::1%25eth0]/", rule: scope.RuleParse},
		// 2. about:blank.
		{name: "about blank", url: "about:blank", allowed: true, rule: scope.RuleAboutBlank},
		{name: "about blank uppercase scheme", url: "ABOUT:blank", allowed: true, rule: scope.RuleAboutBlank},
		{name: "about srcdoc", url: "about:srcdoc", rule: scope.RuleScheme},
		// 3. Scheme.
		{name: "javascript", url: "javascript:alert(1)", rule: scope.RuleScheme},
		{name: "javascript with slashes", url: "javascript://www.example.com/%0aalert(1)", rule: scope.RuleScheme},
		{name: "data", url: "data:text/html,<script>alert(1)</script>", rule: scope.RuleScheme},
		{name: "file", url: "file:///etc/passwd", rule: scope.RuleScheme},
		{name: "blob", url: "blob:https://www.example.com/uuid", rule: scope.RuleScheme},
		{name: "ftp", url: "ftp://www.example.com/", rule: scope.RuleScheme, host: "www.example.com"},
		{name: "gopher", url: "gopher://www.example.com/", rule: scope.RuleScheme},
		{name: "view-source", url: "view-source:http://www.example.com/", rule: scope.RuleScheme},
		{name: "chrome", url: "chrome://settings", rule: scope.RuleScheme},
		{name: "devtools", url: "devtools://devtools/bundled/inspector.html", rule: scope.RuleScheme},
		{name: "ws allowed", url: "ws://www.example.com/socket", allowed: true, rule: glob, host: "www.example.com"},
		{name: "wss allowed", url: "wss://www.example.com/socket", allowed: true, rule: glob, host: "www.example.com"},
		// 4. Blocked wins.
		{name: "blocked subdomain", url: "https://x.evil.com/", rule: `blocked_domains "*.evil.com"`, host: "x.evil.com"},
		{name: "blocked beats glob allow", url: "https://blocked.example.com/", rule: `blocked_domains "blocked.example.com"`, host: "blocked.example.com"},
		{name: "blocked admin suffix", url: "https://admin.example.com/", rule: `blocked_domains "admin.*"`, host: "admin.example.com"},
		{name: "blocked fullwidth spelling", url: "https://ａｄｍｉｎ.example.com/", rule: `blocked_domains "admin.*"`, host: "admin.example.com"},
		// 6. Address classes and grants.
		{name: "granted loopback", url: "http://127.0.0.1:8080/", allowed: true, rule: g4, host: "127.0.0.1", class: "loopback"},
		{name: "granted loopback decimal", url: "http://2130706433/", allowed: true, rule: g4, host: "127.0.0.1", class: "loopback"},
		{name: "canary", url: "http://127.0.0.2/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary decimal", url: "http://2130706434/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary hex", url: "http://0x7f000002/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary octal", url: "http://0177.0.0.2/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary short", url: "http://127.2/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary mixed", url: "http://0x7f.0.02/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary trailing dot", url: "http://127.0.0.2./", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary percent", url: "http://%31%32%37.0.0.2/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary fullwidth", url: "http://１２７．０．０．２/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary userinfo", url: "http://www.example.com@127.0.0.2/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary tab", url: "http://127.0.\t0.2/", rule: loop, host: "127.0.0.2", class: "loopback"},
		{name: "canary mapped", url: "http://[::ffff:127.0.0.2]/", rule: loop, host: "[::ffff:7f00:2]", class: "loopback"},
		{name: "canary nat64", url: "http://[64:ff9b::7f00:2]/", rule: loop, host: "[64:ff9b::7f00:2]", class: "loopback"},
		{name: "backslash at keeps host", url: `http://www.example.com\@127.0.0.2/`, allowed: true, rule: glob, host: "www.example.com"},
		{name: "granted IPv6 loopback", url: "http://[::1]:9000/", allowed: true, rule: `allow_private_cidrs "::1/128"`, host: "[::1]", class: "loopback"},
		{name: "grant needs allowed_domains", url: "http://[::ffff:127.0.0.1]/", rule: notIn, host: "[::ffff:7f00:1]", class: "loopback"},
		{name: "granted private allowed", url: "http://10.1.2.3/", allowed: true, rule: `allow_private_cidrs "10.0.0.0/8"`, host: "10.1.2.3", class: "private"},
		{name: "granted private not allowed", url: "http://10.9.9.9/", rule: notIn, host: "10.9.9.9", class: "private"},
		{name: "ungranted private", url: "http://192.168.1.1/", rule: "address class private", host: "192.168.1.1", class: "private"},
		{name: "ungranted link-local", url: "http://169.254.1.1/", rule: "address class link-local", host: "169.254.1.1", class: "link-local"},
		{name: "ungranted cgnat", url: "http://100.64.0.1/", rule: "address class cgnat", host: "100.64.0.1", class: "cgnat"},
		{name: "ungranted unspecified", url: "http://0/", rule: "address class unspecified", host: "0.0.0.0", class: "unspecified"},
		{name: "ungranted ULA", url: "http://[fd12::1]/", rule: "address class unique-local", host: "[fd12::1]", class: "unique-local"},
		{name: "metadata", url: "http://169.254.169.254/latest/meta-data/", rule: "address class metadata", host: "169.254.169.254", class: "metadata"},
		{name: "metadata decimal", url: "http://2852039166/", rule: "address class metadata", host: "169.254.169.254", class: "metadata"},
		{name: "metadata IPv6", url: "http://[fd00:ec2::254]/", rule: "address class metadata", host: "[fd00:ec2::254]", class: "metadata"},
		{name: "granted range host not allowed", url: "http://10.0.0.1/", rule: notIn, host: "10.0.0.1", class: "private"},
		{name: "localhost granted", url: "http://localhost:3000/", allowed: true, rule: `allow_private_cidrs "127.0.0.1/32", "::1/128"`, host: "localhost", class: "loopback"},
		{name: "localhost dot", url: "http://localhost./", allowed: true, rule: `allow_private_cidrs "127.0.0.1/32", "::1/128"`, host: "localhost", class: "loopback"},
		{name: "sub localhost not allowed", url: "http://app.localhost/", rule: notIn, host: "app.localhost", class: "loopback"},
		// 7. Allowed domains, then not in scope.
		{name: "allowed glob", url: "https://www.example.com/x", allowed: true, rule: glob, host: "www.example.com"},
		{name: "allowed uppercase", url: "HTTPS://WWW.EXAMPLE.COM", allowed: true, rule: glob, host: "www.example.com"},
		{name: "allowed exact", url: "https://docs.example.org/", allowed: true, rule: `allowed_domains "docs.example.org"`, host: "docs.example.org"},
		{name: "allowed global IP", url: "http://8.8.8.8/", allowed: true, rule: `allowed_domains "8.8.8.8"`, host: "8.8.8.8", class: "global"},
		{name: "bare domain not allowed", url: "https://example.com/", rule: notIn, host: "example.com"},
		{name: "other domain", url: "https://example.net/", rule: notIn, host: "example.net"},
		{name: "other global IP", url: "http://1.1.1.1/", rule: notIn, host: "1.1.1.1", class: "global"},
	})
}

func TestCheckNoScope(t *testing.T) {
	t.Parallel()
	s := mustNew(t, scope.Config{BlockedDomains: []string{"*.evil.com"}, AllowPrivateCIDRs: []string{"127.0.0.0/8"}})
	runCheck(t, s, []checkCase{
		{name: "domain", url: "https://www.example.com/", rule: scope.RuleNoScope, host: "www.example.com"},
		{name: "granted loopback", url: "http://127.0.0.1/", rule: scope.RuleNoScope, host: "127.0.0.1"},
		{name: "blocked still named", url: "https://a.evil.com/", rule: `blocked_domains "*.evil.com"`, host: "a.evil.com"},
		{name: "scheme first", url: "javascript:1", rule: scope.RuleScheme},
		{name: "about blank", url: "about:blank", allowed: true, rule: scope.RuleAboutBlank},
	})
	var nilScope *scope.Scope
	runCheck(t, nilScope, []checkCase{
		{name: "nil scope", url: "https://www.example.com/", rule: scope.RuleNilScope, host: "www.example.com"},
	})
}

func TestCheckAllowExternal(t *testing.T) {
	t.Parallel()
	s := mustNew(t, scope.Config{
		AllowExternal:     true,
		BlockedDomains:    []string{"*.evil.com"},
		AllowPrivateCIDRs: []string{"127.0.0.1/32", "169.254.0.0/16"},
	})
	runCheck(t, s, []checkCase{
		{name: "any domain", url: "https://anything.example.net/", allowed: true, rule: scope.RuleAllowExternal, host: "anything.example.net"},
		{name: "global IP", url: "http://1.1.1.1/", allowed: true, rule: scope.RuleAllowExternal, host: "1.1.1.1", class: "global"},
		{name: "blocked", url: "https://x.evil.com/", rule: `blocked_domains "*.evil.com"`, host: "x.evil.com"},
		{name: "private still refused", url: "http://10.0.0.1/", rule: "address class private", host: "10.0.0.1", class: "private"},
		{name: "granted loopback", url: "http://127.0.0.1/", allowed: true, rule: `allow_private_cidrs "127.0.0.1/32"`, host: "127.0.0.1", class: "loopback"},
		{name: "ungranted loopback", url: "http://127.0.0.2/", rule: "address class loopback", host: "127.0.0.2", class: "loopback"},
		{name: "metadata never granted", url: "http://169.254.169.254/", rule: "address class metadata", host: "169.254.169.254", class: "metadata"},
		{name: "ECS metadata never granted", url: "http://169.254.170.2/", rule: "address class metadata", host: "169.254.170.2", class: "metadata"},
		{name: "link-local granted", url: "http://169.254.1.1/", allowed: true, rule: `allow_private_cidrs "169.254.0.0/16"`, host: "169.254.1.1", class: "link-local"},
		{name: "localhost needs both", url: "http://localhost/", rule: "address class loopback", host: "localhost", class: "loopback"},
	})
}

func TestCheckMetadataEverywhere(t *testing.T) {
	t.Parallel()
	s := mustNew(t, scope.Config{
		AllowedDomains:    []string{"*"},
		AllowExternal:     true,
		AllowPrivateCIDRs: []string{"0.0.0.0/0", "::/0"},
	})
	for _, u := range []string{
		"http://169.254.169.254/", "http://169.254.170.2/", "http://[fd00:ec2::254]/",
		"http://100.100.100.200/", "http://192.0.0.192/", "http://[::ffff:a9fe:a9fe]/",
		"http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/", "http://0xa9fea9fe/",
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			if v := s.Check(u); v.Allowed || v.Class != "metadata" {
				t.Errorf("Check(%q) = %+v, want a metadata denial", u, v)
			}
		})
	}
	if v := s.Check("http://10.0.0.1/"); !v.Allowed {
		t.Errorf("a /0 grant with * should allow 10.0.0.1: %+v", v)
	}
}

func TestNewReportsEveryBadEntry(t *testing.T) {
	t.Parallel()
	_, err := scope.New(scope.Config{
		AllowedDomains:    []string{"ok.example.com", "", "**.example.com"},
		BlockedDomains:    []string{"bad host", "*.evil.com"},
		AllowPrivateCIDRs: []string{"127.0.0.1/32", "10.0.0.5/8", "nonsense", "169.254.169.254/32", "127.0.0.1"},
	})
	if err == nil {
		t.Fatal("New accepted bad entries")
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("New error %v is not a joined error", err)
	}
	type entry struct {
		field string
		index int
	}
	var got []entry
	for _, e := range joined.Unwrap() {
		var ee *scope.EntryError
		if !errors.As(e, &ee) {
			t.Fatalf("error %v is not an *EntryError", e)
		}
		if !strings.Contains(e.Error(), ee.Field) || !strings.Contains(e.Error(), fmt.Sprintf("%q", ee.Entry)) {
			t.Errorf("error %q does not name its field and entry", e)
		}
		got = append(got, entry{ee.Field, ee.Index})
	}
	want := []entry{
		{"allowed_domains", 1}, {"allowed_domains", 2}, {"blocked_domains", 0},
		{"allow_private_cidrs", 1}, {"allow_private_cidrs", 2}, {"allow_private_cidrs", 3}, {"allow_private_cidrs", 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("New reported %v, want %v", got, want)
	}
	for _, sentinel := range []error{scope.ErrInvalidPattern, scope.ErrInvalidCIDR, scope.ErrMetadataGrant} {
		if !errors.Is(err, sentinel) {
			t.Errorf("New error does not wrap %v", sentinel)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	s := mustNew(t, scope.Config{AllowedDomains: []string{"*.example.com"}, AllowPrivateCIDRs: []string{"127.0.0.1/32", "169.254.0.0/16"}})
	tests := []struct {
		addr    string
		allowed bool
		rule    string
	}{
		{"93.184.216.34", true, "address class global"},
		{"2606:4700::1111", true, "address class global"},
		{"127.0.0.1", true, `allow_private_cidrs "127.0.0.1/32"`},
		{"::ffff:127.0.0.1", true, `allow_private_cidrs "127.0.0.1/32"`},
		{"127.0.0.2", false, "address class loopback"},
		{"10.0.0.1", false, "address class private"},
		{"169.254.169.254", false, "address class metadata"},
		{"fe80::1", false, "address class link-local"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			v := s.CheckAddr(netip.MustParseAddr(tt.addr))
			if v.Allowed != tt.allowed || v.Rule != tt.rule || !strings.Contains(v.Reason, v.Host) {
				t.Errorf("CheckAddr(%s) = %+v, want allowed=%v rule=%q", tt.addr, v, tt.allowed, tt.rule)
			}
		})
	}
}

func TestDomainSets(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfig)
	tests := []struct {
		host string
		want []string
	}{
		{"www.example.com", []string{"allowed"}},
		{"WWW.Example.COM.", []string{"allowed"}},
		{"blocked.example.com", []string{"allowed", "blocked"}},
		{"x.evil.com", []string{"blocked"}},
		{"example.net", nil},
		{"127.0.0.1", []string{"allowed"}},
		{"a b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			if got := s.DomainSets(tt.host); !slices.Equal(got, tt.want) {
				t.Errorf("DomainSets(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}

// TestCheckGolden runs every URL in testdata/check.urls (one per line, Go
// string syntax allowed) through the test scope and compares the verdicts
// with testdata/check.golden. Regenerate with: go test ./scope -run Golden -update
func TestCheckGolden(t *testing.T) {
	t.Parallel()
	s := mustNew(t, testConfig)
	in, err := os.ReadFile(filepath.Join("testdata", "check.urls"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for line := range strings.Lines(string(in)) {
		line = strings.TrimRight(line, "\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u := line
		if strings.HasPrefix(line, `"`) {
			if _, err := fmt.Sscanf(line, "%q", &u); err != nil {
				t.Fatalf("bad quoted line %s: %v", line, err)
			}
		}
		v := s.Check(u)
		fmt.Fprintf(&b, "%q\n\tallowed=%v rule=%s host=%q class=%q url=%q\n\t%s\n", u, v.Allowed, v.Rule, v.Host, v.Class, v.URL, v.Reason)
	}
	golden := filepath.Join("testdata", "check.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("verdicts differ from %s (rerun with -update and review the diff):\n%s", golden, b.String())
	}
}

// TestNamedDomainSets: a host's Cedar parents are allowed/blocked and every
// named set it matches; bad set names and bad globs are refused.
func TestNamedDomainSets(t *testing.T) {
	t.Parallel()
	s := mustNew(t, scope.Config{
		AllowedDomains: []string{"*.example.com", "pay.example.net"},
		BlockedDomains: []string{"admin.example.com"},
		DomainSets: map[string][]string{
			"payments": {"pay.example.net", "checkout.example.com"},
			"internal": {"*.example.com"},
			"empty":    {},
		},
	})
	for host, want := range map[string]string{
		"checkout.example.com": "allowed internal payments",
		"pay.example.net":      "allowed payments",
		"PAY.Example.NET.":     "allowed payments",
		"admin.example.com":    "allowed blocked internal",
		"other.test":           "",
		"a b":                  "",
	} {
		if got := strings.Join(s.DomainSets(host), " "); got != want {
			t.Errorf("DomainSets(%q) = %q, want %q", host, got, want)
		}
	}
	_, err := scope.New(scope.Config{DomainSets: map[string][]string{"allowed": {"a.test"}, "Pay": {"a.test"}, "ok": {"bad glob/"}}})
	for _, want := range []string{`domain_sets.allowed "allowed"`, `domain_sets.Pay "Pay"`, `domain_sets.ok[0] "bad glob/"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with bad sets: %v; want it to name %s", err, want)
		}
	}
}

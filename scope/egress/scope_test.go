package egress_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// TestRealScope runs the proxy with the real *scope.Scope as its Policy, so
// the two agree on host spelling (legacy IPv4, case), address classes and
// grants.
func TestRealScope(t *testing.T) {
	t.Parallel()
	b := newBackendOn(t, "127.0.0.1:0", false)
	// Names are held to allowed_ports, so the backend's port is listed.
	s, err := scope.New(scope.Config{
		AllowedDomains:    []string{"*.test", "127.0.0.1"},
		BlockedDomains:    []string{"blocked.test"},
		AllowPrivateCIDRs: []string{"127.0.0.1/32"},
		AllowedPorts:      []string{strconv.Itoa(int(b.port()))},
	})
	if err != nil {
		t.Fatal(err)
	}
	canary := newBackendOn(t, fmt.Sprintf("127.0.0.2:%d", b.port()), false)
	res := newFakeResolver("app.test", "127.0.0.1", "canary.test", "127.0.0.2", "mixed.test", "127.0.0.1,127.0.0.2",
		"meta.test", "169.254.169.254", "blocked.test", "127.0.0.1")
	dials := &dialRecorder{}
	p, err := egress.New(egress.Config{Policy: s, Resolver: res, Dial: dials.Dial, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := p.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}}

	for _, tc := range []struct {
		host     string
		status   int
		wantRule string
	}{
		{"app.test", 200, ""},
		{"app.test:22", 403, scope.RuleAllowedPorts},
		{"APP.TEST", 200, ""},
		{"2130706433", 200, ""}, // 127.0.0.1 in a legacy spelling, canonicalised, not resolved
		{"0x7f.2", 403, "address class loopback"},
		{"other.example", 403, scope.RuleNotAllowed},
		{"blocked.test", 403, `blocked_domains "blocked.test"`},
		{"canary.test", 403, "address class loopback"},
		{"mixed.test", 403, "address class loopback"},
		{"meta.test", 403, "address class metadata"},
		{"nx.test", 502, egress.RuleDNS},
	} {
		t.Run(tc.host, func(t *testing.T) {
			hostport := tc.host
			if !strings.Contains(hostport, ":") {
				hostport = fmt.Sprintf("%s:%d", tc.host, b.port())
			}
			r, err := client.Get("http://" + hostport + "/")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode != tc.status || r.Header.Get("X-Browsergate-Denied") != tc.wantRule {
				t.Errorf("got %d %q, want %d %q (%s)", r.StatusCode, r.Header.Get("X-Browsergate-Denied"), tc.status, tc.wantRule, r.Header.Get("X-Browsergate-Reason"))
			}
		})
	}
	if canary.hits.Load() != 0 {
		t.Errorf("canary saw %d requests", canary.hits.Load())
	}
	for _, a := range dials.dialed() {
		if a != fmt.Sprintf("127.0.0.1:%d", b.port()) {
			t.Errorf("dialled %s", a)
		}
	}
}

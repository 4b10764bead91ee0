package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// fakePolicy allows the names in hosts and the addresses in addrs; it
// denies everything else. IP-literal hosts are judged by addrs.
type fakePolicy struct {
	hosts map[string]bool
	addrs map[netip.Addr]bool
	// panicOn makes CheckHost panic for that host, to test fail-closed.
	panicOn string

	hostCalls, addrCalls atomic.Int64
}

func newFakePolicy(hosts []string, addrs ...string) *fakePolicy {
	p := &fakePolicy{hosts: map[string]bool{}, addrs: map[netip.Addr]bool{}}
	for _, h := range hosts {
		p.hosts[h] = true
	}
	for _, a := range addrs {
		p.addrs[netip.MustParseAddr(a)] = true
	}
	return p
}

func (p *fakePolicy) CheckHost(host string, port uint16) scope.Verdict {
	p.hostCalls.Add(1)
	if host == p.panicOn {
		panic("policy engine exploded")
	}
	h := strings.ToLower(host)
	v := scope.Verdict{Host: h}
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if p.addrs[a] {
			v.Allowed, v.Rule, v.Reason = true, "allow_private_cidrs", "literal "+h+" is granted"
			return v
		}
		v.Rule, v.Reason = "address class loopback", "literal "+h+" is not granted"
		return v
	}
	if p.hosts[h] {
		v.Allowed, v.Rule, v.Reason = true, fmt.Sprintf("allowed_domains %q", h), "host "+h+" is allowed"
		return v
	}
	v.Rule, v.Reason = scope.RuleNotAllowed, "host "+h+" is not in allowed_domains"
	return v
}

func (p *fakePolicy) CheckAddrPort(ap netip.AddrPort) scope.Verdict {
	p.addrCalls.Add(1)
	v := scope.Verdict{Host: ap.Addr().String()}
	if p.addrs[ap.Addr()] {
		v.Allowed, v.Rule, v.Reason = true, "allow_private_cidrs", "address "+ap.String()+" is granted"
		return v
	}
	v.Rule, v.Reason = "address class loopback", "address "+ap.String()+" is not granted"
	return v
}

// errNXDomain stands for a name that does not exist.
var errNXDomain = &net.DNSError{Err: "no such host", IsNotFound: true}

// fakeResolver answers from a map, or from answer when it is set, and
// counts lookups per name.
type fakeResolver struct {
	mu      sync.Mutex
	names   map[string][]netip.Addr
	answer  func(ctx context.Context, host string, n int) ([]netip.Addr, error)
	lookups map[string]int
}

func newFakeResolver(pairs ...string) *fakeResolver {
	r := &fakeResolver{names: map[string][]netip.Addr{}, lookups: map[string]int{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		for _, a := range strings.Split(pairs[i+1], ",") {
			r.names[pairs[i]] = append(r.names[pairs[i]], netip.MustParseAddr(a))
		}
	}
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.lookups[host]++
	n := r.lookups[host]
	answer := r.answer
	addrs, ok := r.names[host]
	r.mu.Unlock()
	if answer != nil {
		return answer(ctx, host, n)
	}
	if !ok {
		return nil, errNXDomain
	}
	return addrs, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

// dialRecorder records every address the proxy dials, then dials it.
type dialRecorder struct {
	mu    sync.Mutex
	addrs []string
	fail  error
}

func (d *dialRecorder) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	fail := d.fail
	d.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func (d *dialRecorder) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// decisions records what OnDecision receives.
type decisions struct {
	mu   sync.Mutex
	list []egress.Decision
}

func (r *decisions) add(d egress.Decision) {
	r.mu.Lock()
	r.list = append(r.list, d)
	r.mu.Unlock()
}

func (r *decisions) all() []egress.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]egress.Decision(nil), r.list...)
}

// backend is an HTTP server on a loopback address that counts requests and
// echoes the Host header it saw.
type backend struct {
	*httptest.Server
	hits atomic.Int64
}

func (b *backend) port() uint16 {
	return netip.MustParseAddrPort(b.Listener.Addr().String()).Port()
}

func newBackendOn(t testing.TB, addr string, tls bool) *backend {
	t.Helper()
	b := &backend{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		if r.URL.Path == "/ws" {
			serveEcho(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Seen-Host", r.Host)
		w.Header().Set("X-Seen-Authorization", r.Header.Get("Authorization"))
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	})
	b.Server = httptest.NewUnstartedServer(h)
	b.Config.ErrorLog = log.New(io.Discard, "", 0) // tunnels closed mid-handshake are expected
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	b.Listener.Close()
	b.Listener = ln
	if tls {
		b.StartTLS()
	} else {
		b.Start()
	}
	t.Cleanup(b.Close)
	return b
}

// rig is a proxy with fakes around it, a backend on 127.0.0.1 (allowed)
// and a canary on 127.0.0.2 (denied).
type rig struct {
	proxy     *egress.Proxy
	proxyURL  *url.URL
	policy    *fakePolicy
	resolver  *fakeResolver
	dials     *dialRecorder
	decisions *decisions
	backend   *backend
	canary    *backend
}

type rigOptions struct {
	tls    bool
	config func(*egress.Config)
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	r := &rig{
		policy: newFakePolicy([]string{"app.test", "rebind.test", "mixed.test", "canary.test", "slow.test", "closed.test", "self.test"},
			"127.0.0.1"),
		resolver: newFakeResolver(
			"app.test", "127.0.0.1",
			"canary.test", "127.0.0.2",
			"mixed.test", "127.0.0.1,127.0.0.2",
			"denied.test", "127.0.0.1",
			"closed.test", "127.0.0.1",
			"self.test", "127.0.0.1",
		),
		dials:     &dialRecorder{},
		decisions: &decisions{},
		backend:   newBackendOn(t, "127.0.0.1:0", o.tls),
	}
	// The canary listens on the backend's port on 127.0.0.2, so that a
	// target that slipped through to the denied address would reach it.
	r.canary = newBackendOn(t, fmt.Sprintf("127.0.0.2:%d", r.backend.port()), o.tls)
	cfg := egress.Config{
		Policy:     r.policy,
		Resolver:   r.resolver,
		Dial:       r.dials.Dial,
		OnDecision: r.decisions.add,
		Logger:     slog.New(slog.DiscardHandler),
	}
	if o.config != nil {
		o.config(&cfg)
	}
	p, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := p.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	r.proxy = p
	r.proxyURL = &url.URL{Scheme: "http", Host: addr}
	return r
}

// client returns an HTTP client that uses the proxy.
func (r *rig) client() *http.Client {
	tr := &http.Transport{Proxy: http.ProxyURL(r.proxyURL)}
	if r.backend.TLS != nil {
		tr.TLSClientConfig = r.backend.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate
	}
	return &http.Client{Transport: tr}
}

// url returns a URL for host on the backend's port.
func (r *rig) url(scheme, host, path string) string {
	return fmt.Sprintf("%s://%s:%d%s", scheme, host, r.backend.port(), path)
}

func (r *rig) lastDecision(t testing.TB) egress.Decision {
	t.Helper()
	ds := r.decisions.all()
	if len(ds) == 0 {
		t.Fatal("no decision was reported")
	}
	return ds[len(ds)-1]
}

func isConnError(err error) bool {
	var ue *url.Error
	return err != nil && errors.As(err, &ue)
}

package egress_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/browsergate/browsergate/scope/egress"
)

// BenchmarkProxyRequest measures a keep-alive GET through the proxy and,
// for comparison, the same GET straight to the backend; the difference is
// the proxy's per-request overhead (check, lookup, pinned pooled dial).
func BenchmarkProxyRequest(b *testing.B) {
	r := newRig(b, rigOptions{})
	for _, bc := range []struct {
		name   string
		client *http.Client
		url    string
	}{
		{"direct", &http.Client{Transport: &http.Transport{}}, r.backend.URL + "/bench"},
		{"proxy", r.client(), r.url("http", "app.test", "/bench")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := bc.client.Get(bc.url)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
		})
	}
}

// BenchmarkDecision measures the gate alone: the policy's host check, one
// fake lookup and the check of every answer.
func BenchmarkDecision(b *testing.B) {
	p, err := egress.New(egress.Config{
		Policy:   newFakePolicy([]string{"app.test"}, "127.0.0.1", "127.0.0.2"),
		Resolver: newFakeResolver("app.test", "127.0.0.1,127.0.0.2"),
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	for _, bc := range []struct{ name, host, wantRule string }{
		{"name allowed", "app.test", ""},
		{"literal allowed", "127.0.0.1", ""},
		{"name denied", "evil.test", "not in allowed_domains"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, rule := p.GateForTest(ctx, bc.host, 80); rule != bc.wantRule {
					b.Fatalf("rule %q, want %q", rule, bc.wantRule)
				}
			}
		})
	}
}

package executor

import (
	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/toolclad"
)

// hostLimiter is the manifest's per-host spacing of requests, shared by
// its sessions: politeness to a host is about all the traffic it gets.
// The browserless engine's client and a browser's request guard
// (guard_pacing.go) each have their own rate.
func (b *backend) hostLimiter() *web.HostLimiter {
	b.limiterOnce.Do(func() {
		if b.limiter == nil {
			b.limiter = newHostLimiter(b.key.manifest)
		}
	})
	return b.limiter
}

// newHostLimiter is the limiter of a manifest's requests per host.
func newHostLimiter(m *toolclad.Manifest) *web.HostLimiter {
	rate := m.Browser.HTTP.RequestsPerSecondPerHost
	if m.Browser.Engine != toolclad.EngineHTTP {
		rate = m.Browser.RequestsPerSecondPerHost
	}
	return web.NewHostLimiter(rate)
}

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
			b.limiter = newHostLimiter(b.key.manifest, b.pacing)
		}
	})
	return b.limiter
}

// newHostLimiter is the limiter of a manifest's requests per host: with a
// fleet's shared schedule, the schedule of the manifest's tool name.
//
// A fleet's replicas load the same manifests, and a manifest is known
// across them, and across reloads, by its tool name, which the policies
// and the evidence name it by too: a hash of its text would give a
// replica that has not reloaded an edit yet (a rolling deploy) a schedule
// of its own, and the host twice the rate. Replicas whose manifests of
// one name set different rates share one schedule, each request spaced
// from the last by its own manifest's interval.
func newHostLimiter(m *toolclad.Manifest, shared web.Schedule) *web.HostLimiter {
	rate := m.Browser.HTTP.RequestsPerSecondPerHost
	if m.Browser.Engine != toolclad.EngineHTTP {
		rate = m.Browser.RequestsPerSecondPerHost
	}
	if shared != nil {
		return web.NewSharedHostLimiter(rate, shared, m.Tool.Name)
	}
	return web.NewHostLimiter(rate)
}

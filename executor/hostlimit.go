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
		rate := b.key.manifest.Browser.HTTP.RequestsPerSecondPerHost
		if b.key.manifest.Browser.Engine != toolclad.EngineHTTP {
			rate = b.key.manifest.Browser.RequestsPerSecondPerHost
		}
		b.limiter = web.NewHostLimiter(rate)
	})
	return b.limiter
}

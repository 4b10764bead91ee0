package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
)

// A browser manifest's [browser.scope] requests_per_second_per_host paces
// the requests the session's pages make, per host, in the request guard:
// a request the scope allowed is held paused until its host's turn
// comes, and then continues; one whose turn would come later than
// timeout_seconds from now is refused (rule rulePaced), and the refusal
// is recorded and reported like any other. The agent's own navigation is
// one of those requests, so it waits its turn within its call's timeout.
// A host is the host the URL names, counted as web.HostLimiter.WaitHost
// counts it (an IP literal in any spelling is its address): the guard
// judges a request before anything resolves its name. Pacing is off
// unless the manifest sets a rate.

// rulePaced is the rule of a request refused because its turn at its
// host would not come in time.
const rulePaced = "requests_per_second_per_host"

// requestPacing is the guard's side of the pacing.
type requestPacing struct {
	// limiter spaces the requests to each host (nil or rate 0: no
	// pacing); it is the manifest's, shared by its sessions, since
	// politeness to a host is about all the traffic it gets.
	limiter *web.HostLimiter
	// within is how long a request may wait for its turn: the manifest's
	// timeout_seconds.
	within time.Duration
}

// paced returns v once the request it allowed has had its turn at its
// host, or a refusal when the turn would not come within p.within. A
// refusal, or a URL with no host (data:, blob:, about:), is returned as
// it is.
func (p requestPacing) paced(v scope.Verdict, url string) scope.Verdict {
	if !v.Allowed || !p.limiter.Enabled() {
		return v
	}
	u, err := scope.ParseURL(url)
	if err != nil || u.Host == "" {
		return v
	}
	within := p.within
	if within <= 0 {
		within = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := p.limiter.WaitHost(ctx, u.Host); err != nil {
		// The host is the page's (or the agent's) text: marked for the
		// masker (package pagetext); the sentence is browsergate's.
		return scope.Verdict{URL: url, Rule: rulePaced,
			Reason: fmt.Sprintf("no turn at host %s within timeout_seconds (%s): requests_per_second_per_host spaces each host's requests, and %v",
				pagetext.Value(u.Host), within, err)}
	}
	return v
}

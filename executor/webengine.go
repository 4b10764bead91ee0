package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// The browserless engine ([browser] engine = "http") runs fetch_page,
// search_web and download_file over plain HTTP, with no browser at all,
// through the same loop as the browser's commands: the same decide (scope,
// Cedar, approvals), the same evidence. Its requests go through the egress
// proxy's own decision and pinned dial (egress.Proxy.DialContext), each
// redirect judged before it is followed (web.Client), spaced per host
// (requests_per_second_per_host), a host being the address dialled.
//
// Its page state is the page fetch_page last read: url (after redirects),
// title, domain, has_forms, is_authenticated (a log out control on the
// page, or a session cookie the engine holds for it), page_loaded, and
// tab_count 1. search_web and download_file leave it as it is.

// DefaultUserAgent names browsergate in the browserless engine's requests
// when Config.UserAgent is empty.
const DefaultUserAgent = "browsergate (governed AI agent; +https://github.com/browsergate/browsergate)"

// ensureWeb makes the session's client on its first call.
func (e *Executor) ensureWeb(s *session) error {
	if s.web != nil {
		return nil
	}
	proxy, err := s.backend.newDialProxy(s.egress.blocked, &s.egress)
	if err != nil {
		return fmt.Errorf("egress gate: %w", err)
	}
	jar := web.NewJar()
	ctx, cancel := context.WithCancel(context.Background())
	s.web = &webSession{
		ctx: ctx, cancel: cancel, proxy: proxy, jar: jar,
		client: &web.Client{
			Check:     s.backend.check,
			Dial:      proxy.DialContext,
			Limiter:   s.backend.hostLimiter(),
			Jar:       jar,
			UserAgent: e.cfg.UserAgent,
		},
		page: PageState{URL: "about:blank", TabCount: 1},
	}
	s.web.client.Hop = func(hop int, url string) error {
		if s.web.hop == nil {
			return nil
		}
		return s.web.hop(hop, url)
	}
	return nil
}

// isWeb reports whether the session runs on the browserless engine.
func (s *session) isWeb() bool { return s.manifest.Browser.Engine == toolclad.EngineHTTP }

// lifetime is the context that ends with the session's browser tab, or
// with the session on the browserless engine.
func (s *session) lifetime() context.Context {
	if s.web != nil {
		return s.web.ctx
	}
	return s.tab.ctx
}

// runWebTurn is runTurn for the browserless engine: observe (the page
// state the engine holds), decide, approve, act, with nothing of a browser
// to enforce on: an out-of-scope page (the scope narrowed by a reload) is
// forgotten.
func (e *Executor) runWebTurn(ctx context.Context, s *session, t *turn) {
	if err := e.ensureWeb(s); err != nil {
		t.err = err
		t.deny = deny(evidence.StageAct, "engine", "%v", err)
		return
	}
	actx, cancel := e.webContext(ctx, s)
	defer cancel()
	t.facts = s.web.factsFor(t.call.Args, s.manifest)
	t.verdict = gate.Decide(e.question(s, t, t.facts, false))
	t.mark("decide")
	if t.deny = e.enforceOn(actx, s, t, t.verdict); t.deny != nil {
		return
	}
	if len(t.verdict.Approval) > 0 {
		if t.deny = e.approve(ctx, s, t, nil); t.deny != nil || t.ask != nil {
			return
		}
		cancel()
		actx, cancel = e.webContext(ctx, s)
		defer cancel()
		t.mark("approval")
	}
	if t.deny = s.stopped(); t.deny != nil { // nothing acts once the session has begun to end
		return
	}
	cmd := t.call.Command
	s.web.hop = e.hopJudge(s, t)
	s.web.asked, s.web.clamped, s.web.now = t.call.RawArgs, cmd.Clamped(t.call.RawArgs), e.cfg.Now
	t.out, t.err = commandTable[cmd.Name].act(actx, s, t.call.Args, t.facts)
	s.web.hop, s.web.asked, s.web.clamped = nil, nil, nil
	t.mark("act")
	// Counted after: the redirects were judged on the counters the call
	// itself was decided on.
	s.limits.Counts[cmd.Name]++
	// What the guard refused while the call ran is the call's: a refused
	// redirect or address is said in the reply, as the browser's are.
	after := s.web.page
	t.after = &after
}

// hopJudge judges a redirect of the call as the call itself was judged:
// decide again, with the redirect's URL in place of the url argument, so
// that a policy on URLs (a forbid on "*/private/*") cannot be stepped
// around by a redirect. An approval covers the URL the human saw, not
// where it redirects: a redirect is judged as not approved, and one to
// where a human would have to approve is refused (the agent asks for that
// URL itself, and the human sees it). search_web's requests go to the
// search backend, whose redirects may not leave its origin (a "bang"
// query answers with a redirect the agent shapes). A refused redirect is
// in the call's record, with the rule.
func (e *Executor) hopJudge(s *session, t *turn) func(int, string) error {
	refuse := func(u, rule, reason string) error {
		s.egress.blocked.add(Blocked{Time: e.cfg.Now(), URL: u, Rule: rule, Reason: reason, Layer: "engine"})
		return errors.New(reason)
	}
	if _, ok := t.call.Args["url"]; !ok {
		backend := ""
		if su, err := scope.ParseURL(s.manifest.Browser.Search.URL); err == nil {
			backend = origin(su.String()) // canonical, as the hops are
		}
		return func(hop int, u string) error {
			if origin(u) != backend {
				return refuse(u, "search redirect", fmt.Sprintf("refused: the search backend redirected (redirect %d) to %s, outside its own origin %s; it was not followed", hop, inert(u), backend))
			}
			return nil
		}
	}
	return func(hop int, u string) error {
		call := *t.call
		call.Args = maps.Clone(t.call.Args)
		call.Args["url"] = u
		ht := &turn{call: &call, start: t.start}
		v := gate.Decide(e.question(s, ht, s.web.factsFor(call.Args, s.manifest), false))
		switch {
		case v.Deny != nil:
			return refuse(u, v.Deny.Rule, fmt.Sprintf("refused: redirect %d goes to %s, and the gate refuses it there (%s: %s); it was not followed", hop, inert(u), v.Deny.Rule, v.Deny.Reason))
		case len(v.Approval) > 0:
			return refuse(u, "approval", fmt.Sprintf("refused: redirect %d goes to %s, which needs a human's approval (%s) that the redirect does not have; it was not followed: ask for that URL directly", hop, inert(u), strings.Join(v.Approval, "; ")))
		}
		return nil
	}
}

// enforceOn enforces a verdict on the session's engine: the browser's
// tabs (enforce), or, on the browserless engine, the page it holds: one
// that is out of the scope (a reload narrowed it) is forgotten.
func (e *Executor) enforceOn(ctx context.Context, s *session, t *turn, v gate.Verdict) *DenyError {
	if !s.isWeb() {
		return e.enforce(ctx, s, t, v)
	}
	if v.Reset {
		s.web.page = PageState{URL: "about:blank", TabCount: 1}
		after := s.web.page
		t.after = &after
		if v.Deny != nil {
			v.Deny.Reason += "; the engine forgot that page (it is on about:blank now)"
		}
	}
	return v.Deny
}

// webContext bounds one command like actContext, on the session's
// lifetime.
func (e *Executor) webContext(ctx context.Context, s *session) (context.Context, context.CancelFunc) {
	return commandContext(ctx, s.web.ctx, s)
}

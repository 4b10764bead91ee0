package executor

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/sparetime"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// defaultActTimeout bounds one command when the manifest sets no
// [tool] timeout_seconds.
const defaultActTimeout = 30 * time.Second

// Config wires an Executor. Manifests, Policies and Evidence are required.
type Config struct {
	Manifests []*toolclad.Manifest
	Policies  *cedar.Engine
	Evidence  *evidence.Store
	// Principal is the Cedar principal id of the agent (Web::Agent).
	// Default "local": on stdio the agent is the local operator's.
	Principal string
	// Logger receives one record per gate decision. Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Resolver resolves names for the egress proxy. Default: the system
	// resolver. Tests and air-gapped setups inject fixed answers.
	Resolver egress.Resolver
	// Approvals holds calls that need a human's decision. Nil: such calls
	// are refused (there is nobody to ask).
	Approvals *approval.Broker
	// ApprovalTimeout is how long a held call waits for an answer before
	// it is denied. Default DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// Elicitation also asks the MCP client's user through MCP elicitation
	// when the client supports it. The client must show the form to a
	// human: turn it off for clients that could answer by themselves.
	Elicitation bool
	// Events receives what operators watch: decisions, refused requests,
	// sessions opened and ended (nil: nobody watches).
	Events *events.Hub
	// UserAgent names browsergate in the browserless engine's requests.
	// Default DefaultUserAgent.
	UserAgent string
	// Warm gets a new MCP session's browser context and tab ready before
	// its first call (see Executor.Warm).
	Warm bool
	// CallsAtOnce bounds the calls of browser sessions that run at once,
	// in all (turnstile). Default DefaultCallsPerCore a core.
	CallsAtOnce int
	// CallWait is how long a call waits for its turn before it is refused.
	// Default DefaultCallWait.
	CallWait time.Duration
	// Gate is the daemon's egress gate for browsers on other hosts
	// (connect = "remote"), listening where the pool's hosts reach it
	// (serve --gate-listen). Nil: a remote session cannot start.
	Gate *egress.Gateway
	// Pacing is the schedule a fleet of daemons shares for
	// requests_per_second_per_host (serve --store: package fleet), each
	// manifest's under its tool name (hostlimit.go). Nil: this daemon
	// paces its own requests alone.
	Pacing web.Schedule
	// SessionOpened, when set, is told of each evidence session the
	// executor opens and the MCP session (or browser-session handle) it
	// belongs to, with e.mu held: it must return at once. The daemon's
	// front notes it in the fleet's lease (daemon.Front.NoteEvidence).
	SessionOpened func(mcpID, evidenceID string)
}

// Executor implements toolclad.Runner: it gates, acts and records every
// call. It is safe for concurrent use; calls on one session are serialised.
type Executor struct {
	cfg    Config
	scopes map[*toolclad.Manifest]*scope.Scope

	mu       sync.Mutex
	backends map[backendKey]*backend
	sessions map[sessionKey]*session
	turns    *turnstile           // the browser calls running at once
	notices  map[noticeKey]string // said in the first reply of an MCP session's next session
	// ownBrowsers numbers the sessions' own browsers (remotebackends.go).
	ownBrowsers uint64
	// agents are what each MCP session's agent wrote, in the calls of all
	// its sessions: their replies show it as written (mask.Masker.ForAgent).
	agents map[string]*mask.AgentTexts
	closed bool
	// limiters are the request limiters of the remote manifests, shared
	// by their backends (backendLocked), under mu.
	limiters map[*toolclad.Manifest]*web.HostLimiter
	// shared are the networks no page of any manifest reaches
	// (sharedDenied), under mu.
	shared   []scope.DeniedNetwork
	stateKey [32]byte // seals the request state of approvals asked in two rounds
	policies atomic.Pointer[cedar.Engine]
	secrets  map[*toolclad.Manifest]*gate.Secrets // guarded by mu
	// maskers are each manifest's masker (its secrets only), for its
	// sessions and its backend's log lines; guarded by mu.
	maskers map[*toolclad.Manifest]*mask.Masker
	// allSecrets masks the daemon's own log lines (of no one manifest) and
	// finds the pieces of secrets in what an agent writes (mask.AgentTexts).
	allSecrets atomic.Pointer[mask.Masker]
	// secretAnswers are the secret answers operators gave sessions
	// (await_human), which the daemon's log lines are masked for too;
	// guarded by mu.
	secretAnswers []*toolclad.Secret
	// logs is the daemon's log handler before masking: each backend masks
	// its own lines with its manifest's secrets over it.
	logs    slog.Handler
	configs configCache // configuration blobs already in the evidence log
	// listeners are every backend's DevTools endpoint and egress proxies:
	// no page of any backend may reach them.
	listeners listeners
	// ending counts the sessions taken out of sessions (under mu) that are
	// still being ended: Close waits for them, so that what their ending
	// records is written before the evidence log closes.
	ending sync.WaitGroup
	// beforeApproval, set by tests only, is called as a call of session
	// id that needs a human is about to be held for one, with the
	// session's lock held and before it checks that the session is not
	// ending.
	beforeApproval func(id string)
	// operatorEnded are the sessions operators ended (operator_end.go).
	operatorEnded operatorEnds
	// stopSpinWatch stops the watch on renderers that keep a core busy
	// (spinning.go; nil: it does not run), and spinWatchDone is closed as
	// it has.
	stopSpinWatch, spinWatchDone chan struct{}
}

// sessionKey names a session: an MCP session's calls, by one agent, to
// one manifest's tools. An agent never reaches another's session, even
// with its MCP session id.
type sessionKey struct {
	mcp      string
	agent    string
	manifest *toolclad.Manifest
}

// New checks the configuration and builds the scope of every manifest. No
// browser starts until the first call that needs one.
func New(cfg Config) (*Executor, error) {
	if len(cfg.Manifests) == 0 || cfg.Policies == nil || cfg.Evidence == nil {
		return nil, errors.New("executor: manifests, policies and evidence are required")
	}
	if cfg.Principal == "" {
		cfg.Principal = "local"
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	e := &Executor{
		cfg:      cfg,
		scopes:   map[*toolclad.Manifest]*scope.Scope{},
		backends: map[backendKey]*backend{},
		sessions: map[sessionKey]*session{},
		limiters: map[*toolclad.Manifest]*web.HostLimiter{},
		notices:  map[noticeKey]string{},
		agents:   map[string]*mask.AgentTexts{},
		turns:    newTurnstile(cfg.CallsAtOnce, cfg.CallWait),
	}
	rand.Read(e.stateKey[:])
	e.policies.Store(cfg.Policies)
	var err error
	e.shared = sharedDenied(cfg.Manifests, cfg.Gate)
	if e.scopes, err = compiledScopes(cfg.Manifests, e.shared); err != nil {
		return nil, err
	}
	if e.secrets, err = secretSets(cfg.Manifests); err != nil {
		return nil, err
	}
	e.maskers = manifestMaskers(cfg.Manifests)
	e.allSecrets.Store(mask.FromManifests(cfg.Manifests))
	e.addLiveEndpoints(cfg.Manifests)
	if cfg.Gate != nil {
		if ap, err := netip.ParseAddrPort(cfg.Gate.Addr()); err == nil {
			e.listeners.add(ap, "browsergate's gate for browsers on other hosts")
		}
	}
	// Log lines pass a masker too: a URL the proxy logs may carry a secret
	// a form sent. A backend's and its sessions' lines are masked with
	// its manifest's secrets (backendLocked), the daemon's own with all.
	e.logs = cfg.Logger.Handler()
	e.cfg.Logger = slog.New(mask.NewLogHandler(e.logs, e.allSecrets.Load))
	if sparetime.Allowed() {
		e.stopSpinWatch, e.spinWatchDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(e.spinWatchDone)
			watchSpinning(e.stopSpinWatch, e.openSessions)
		}()
	} else {
		e.cfg.Logger.Debug("a page that keeps a core busy between its session's calls keeps its priority: the daemon could not give a renderer its priority back (it needs CAP_SYS_NICE or an RLIMIT_NICE of 20)")
	}
	return e, nil
}

// openSessions are the sessions open now.
func (e *Executor) openSessions() []*session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Collect(maps.Values(e.sessions))
}

// compiledScopes maps each manifest to its compiled scope (toolclad.Load compiled
// it, so a loaded manifest's scope is valid), with the networks no page
// of the daemon reaches (sharedDenied).
func compiledScopes(ms []*toolclad.Manifest, shared []scope.DeniedNetwork) (map[*toolclad.Manifest]*scope.Scope, error) {
	out := make(map[*toolclad.Manifest]*scope.Scope, len(ms))
	for _, m := range ms {
		sc := m.Scope()
		if sc == nil {
			return nil, fmt.Errorf("%s: the manifest's scope was not compiled (build manifests with toolclad.Load or Parse)", m.Path)
		}
		sc, err := sc.WithDeniedNetworks(shared...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Path, err)
		}
		out[m] = sc
	}
	return out, nil
}

// sharedDenied are the networks no page of any of the daemon's manifests
// reaches, whatever its scope grants: the networks of every remote
// manifest's pool (a pool host's DevTools drives every browser on it,
// and every proxy of the daemon dials from the host the pool lets in)
// and the address of the daemon's gate.
func sharedDenied(ms []*toolclad.Manifest, gate *egress.Gateway) []scope.DeniedNetwork {
	var out []scope.DeniedNetwork
	for _, m := range ms {
		if r := m.Browser.Remote; r != nil {
			for _, p := range r.PoolCIDRs {
				out = append(out, scope.DeniedNetwork{Prefix: p, What: "a network of the remote pool of " + m.Tool.Name + " (pool_cidrs)"})
			}
		}
	}
	if gate != nil {
		if ap, err := netip.ParseAddrPort(gate.Addr()); err == nil {
			a := ap.Addr().Unmap()
			out = append(out, scope.DeniedNetwork{Prefix: netip.PrefixFrom(a, a.BitLen()), What: "the address of the daemon's gate for browsers on other hosts"})
		}
	}
	return out
}

// newlyDenied are the networks of now that were not in before.
func newlyDenied(before, now []scope.DeniedNetwork) []scope.DeniedNetwork {
	var out []scope.DeniedNetwork
	for _, n := range now {
		if !slices.ContainsFunc(before, func(b scope.DeniedNetwork) bool { return b.Prefix == n.Prefix }) {
			out = append(out, n)
		}
	}
	return out
}

// Close ends every session and stops every browser browsergate launched.
func (e *Executor) Close() {
	e.mu.Lock()
	if !e.closed && e.stopSpinWatch != nil {
		close(e.stopSpinWatch)
	}
	e.closed = true
	sessions := e.sessions
	e.sessions = map[sessionKey]*session{}
	backends := e.backends
	e.mu.Unlock()
	e.endSessions(slices.Collect(maps.Values(sessions)), "the daemon shut down")
	e.ending.Wait() // the sessions other paths were ending
	for _, b := range backends {
		b.shutdown()
	}
	if e.spinWatchDone != nil {
		<-e.spinWatchDone
	}
}

// Reload swaps in a new set of manifests and policies, all or nothing: the
// new manifests' scopes are compiled first, and on any error nothing
// changes. New policies decide every later call of every session.
// Manifests are compared by pointer: pass the old *toolclad.Manifest for a
// file that did not change, and its sessions and browser carry on. The
// sessions of a manifest that is not in the new set end (their browser
// contexts close, and the client's next call starts a fresh session under
// the new manifest), and its browser stops.
func (e *Executor) Reload(ms []*toolclad.Manifest, policies *cedar.Engine) error {
	if len(ms) == 0 || policies == nil {
		return errors.New("reload: manifests and policies are required")
	}
	shared := sharedDenied(ms, e.cfg.Gate)
	scopes, err := compiledScopes(ms, shared)
	if err != nil {
		return err
	}
	secrets, err := secretSets(ms)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return errors.New("reload: executor is shutting down")
	}
	var ended []*session
	var stopped []*backend
	for k, s := range e.sessions {
		if _, kept := scopes[k.manifest]; !kept {
			ended = append(ended, s)
			delete(e.sessions, k)
			e.notices[noticeKey{k.mcp, k.manifest.Tool.Name}] = fmt.Sprintf(
				"the daemon reloaded the manifest %s, which ended the previous session %s: this call started a new session with a fresh browser context (a blank tab, no cookies)", k.manifest.Path, s.id)
		}
	}
	for k, b := range e.backends {
		if _, kept := scopes[k.manifest]; !kept {
			stopped = append(stopped, b)
			delete(e.backends, k)
		}
	}
	for m := range e.limiters {
		if _, kept := scopes[m]; !kept {
			delete(e.limiters, m)
		}
	}
	// A pool a new remote manifest brings is refused to the pages of
	// every kept backend too, from now on; a pool no longer served stays
	// refused to them until the daemon restarts (fail closed).
	added := newlyDenied(e.shared, shared)
	for m, sc := range e.scopes {
		if _, kept := scopes[m]; kept {
			if len(added) > 0 {
				sc, _ = sc.WithDeniedNetworks(added...) // valid: compiledScopes took them
			}
			scopes[m] = sc // unchanged manifest: its backend holds this scope
		}
	}
	keptBackends := slices.Collect(maps.Values(e.backends))
	e.shared = append(e.shared, added...)
	e.cfg.Manifests, e.scopes, e.secrets = ms, scopes, secrets
	e.policies.Store(policies)
	// The ended sessions' last record is masked with the secrets of their
	// manifests, which each session holds (session.masker).
	e.maskers = manifestMaskers(ms)
	e.allSecrets.Store(mask.New(append(secretsOf(ms), e.secretAnswers...)))
	e.ending.Add(1)
	e.mu.Unlock()
	// Registered once e.mu is let go: each new registration sends the
	// live sessions' WebSocket rules to their targets
	// (refreshWebSocketRules), which the executor's lock need not wait
	// for. A backend registers the endpoint it attaches to itself too.
	e.addLiveEndpoints(ms)
	for _, b := range keptBackends { // not under e.mu: a backend starting holds b.mu
		b.denyMore(added)
	}
	defer e.ending.Done()
	e.endSessions(ended, "the daemon reloaded its manifest")
	for _, b := range stopped {
		b.shutdown()
	}
	return nil
}

// RuleGuardLost is the rule of a session ended because its request guard
// lost its DevTools connection (a call in flight is refused with it).
const RuleGuardLost = "guard lost"

// endGuardLost ends a session whose request guard lost its DevTools
// connection: its pages can no longer be held to the scope, so its
// browser context closes, a call in flight is refused, and the MCP
// session's next call starts a fresh session, told why.
func (e *Executor) endGuardLost(s *session) {
	e.mu.Lock()
	var key sessionKey
	found := false
	for k, cand := range e.sessions {
		if cand == s {
			key, found = k, true
		}
	}
	if !found { // ending already
		e.mu.Unlock()
		return
	}
	delete(e.sessions, key)
	why := "its request guard lost its DevTools connection to the browser, so its pages could no longer be held to the scope"
	e.notices[noticeKey{key.mcp, key.manifest.Tool.Name}] = fmt.Sprintf(
		"session %s ended: %s; this call started a new session with a fresh browser context (a blank tab, no cookies)", s.id, why)
	s.stopCalls(RuleGuardLost, fmt.Sprintf("session %s ended while this call was in flight: %s; nothing more was done", s.id, why))
	e.ending.Add(1)
	e.mu.Unlock()
	defer e.ending.Done()
	e.endSessions([]*session{s}, why)
}

// EndSession closes the browser contexts of an MCP session that ended.
func (e *Executor) EndSession(mcpID string) {
	e.EndSessionFor(mcpID, "the MCP client ended its session")
}

// EndSessionFor closes the browser contexts of session id (an MCP
// session, or a stateless client's browser session), recording why it
// ended.
func (e *Executor) EndSessionFor(mcpID, why string) {
	e.mu.Lock()
	var ended []*session
	for k, s := range e.sessions {
		if k.mcp == mcpID {
			ended = append(ended, s)
			delete(e.sessions, k)
		}
	}
	delete(e.agents, mcpID)
	e.operatorEnded.forget(mcpID)
	if len(ended) == 0 { // none, or Close took them
		e.mu.Unlock()
		return
	}
	e.ending.Add(1)
	e.mu.Unlock()
	defer e.ending.Done()
	e.endSessions(ended, why)
}

// session returns the session of an MCP session on a manifest, creating it
// on first use.
func (e *Executor) session(call *toolclad.Call) (*session, error) {
	m := call.Manifest
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("executor is shutting down")
	}
	if m == nil {
		m = e.cfg.Manifests[0] // an undeclared tool is recorded with the first manifest
	}
	if _, current := e.scopes[m]; !current {
		return nil, errors.New("the manifest of this tool was reloaded; list the tools again and call the new one")
	}
	k := sessionKey{call.SessionID, call.Agent, m}
	if end, ok := e.operatorEnded.of(k); ok {
		e.cfg.Logger.Warn("call refused: an operator ended its session", "session", end.session, "operator", end.operator, "tool", call.Tool)
		return nil, errors.New(end.refusal())
	}
	if s, ok := e.sessions[k]; ok {
		return s, nil
	}
	return e.newSessionLocked(k, ""), nil
}

// renew replaces an expired session by a new one (a new evidence session
// with a fresh browser context) whose first reply says why; e.mu must not
// be held, nor old.mu.
func (e *Executor) renew(old *session, why string) (*session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("executor is shutting down")
	}
	k := sessionKey{old.mcpID, old.agentID, old.manifest}
	cur, ok := e.sessions[k]
	switch {
	case !ok:
		return nil, errors.New("this session has ended") // the MCP session ended, or a reload ended it
	case cur != old:
		return cur, nil // another call renewed it first
	}
	if _, current := e.scopes[old.manifest]; !current {
		return nil, errors.New("the manifest of this tool was reloaded; list the tools again and call the new one")
	}
	e.ending.Add(1)
	go func() {
		defer e.ending.Done()
		e.endSessions([]*session{old}, "it expired ("+why+")")
	}()
	return e.newSessionLocked(k, fmt.Sprintf("the previous session %s expired (%s), so this call started a new session with a fresh browser context", old.id, why)), nil
}

// newSessionLocked creates the session k; e.mu must be held.
func (e *Executor) newSessionLocked(k sessionKey, notice string) *session {
	m, now := k.manifest, e.cfg.Now()
	s := newSession(m, k.mcp, e.backendLocked(m), now)
	s.agentID, s.principal = k.agent, k.agent
	if s.principal == "" {
		s.principal = e.cfg.Principal
	}
	s.masker.Store(e.maskers[m])
	s.egress.blocked.stamp = s.stampBlocked
	s.egress.blocked.onAdd = func(b Blocked) {
		// The proxy logs its own decisions; interception's are logged
		// here, as they happen, whether or not a call is running.
		if b.Layer == "interception" {
			s.backend.logger.Warn("request refused", "session", s.id, "url", b.URL, "rule", b.Rule, "reason", b.Reason, "layer", b.Layer)
		}
		if e.cfg.Events != nil {
			e.cfg.Events.Publish(events.Event{Type: events.Blocked, Session: s.id, Agent: s.principal, Tool: s.manifest.Tool.Name,
				URL: s.masker.Load().Mask(b.URL), Rule: b.Rule, Reason: s.masker.Load().Finish(reasonMarked(b), true), Layer: b.Layer})
		}
	}
	s.secrets.Store(e.secrets[m])
	s.downloadGate = func(ctx context.Context, dl *download, asking func(string)) downloadAnswer {
		return e.judgePageDownload(ctx, s, dl, asking)
	}
	s.downloadRecord = func(dl *download) { e.recordPageDownload(s, dl) }
	s.guardLost = func() { e.endGuardLost(s) }
	s.askHuman = func(ctx context.Context, call *toolclad.Call, f *facts) (output, error) {
		return e.askHuman(ctx, s, call, f)
	}
	// One agent's texts for all its sessions: a new session after an
	// expiry or a reload, or on another tool, shows them as written too.
	if e.agents[k.mcp] == nil {
		e.agents[k.mcp] = &mask.AgentTexts{}
	}
	s.agent = e.agents[k.mcp]
	s.maskText = func(v string) string { return s.maskPage(v, s.pageHosts()...) }
	s.secretSpans = func(v string) [][2]int { return s.masker.Load().Spans(v) }
	if n, ok := e.notices[noticeKey{k.mcp, m.Tool.Name}]; ok {
		delete(e.notices, noticeKey{k.mcp, m.Tool.Name})
		notice = n
	}
	s.notice = notice
	e.sessions[k] = s
	e.cfg.Events.Publish(events.Event{Type: events.SessionOpened, Session: s.id, Agent: s.principal, Tool: m.Tool.Name})
	if e.cfg.SessionOpened != nil {
		e.cfg.SessionOpened(k.mcp, s.id)
	}
	return s
}

// backendLocked is the backend of a manifest, made on first use; e.mu
// must be held.
func (e *Executor) backendLocked(m *toolclad.Manifest) *backend {
	bk := backendKey{
		connect:    m.Browser.Connect,
		executable: m.Browser.ExecutablePath,
		endpoint:   m.Browser.LiveEndpoint,
		headless:   m.Browser.Headless,
		manifest:   m,
	}
	switch {
	case ownBrowser(m):
		bk.endpoint = e.ownBrowserSlotLocked(m.Browser.Remote.URL)
	case m.Browser.Remote != nil:
		bk.endpoint = e.poolEndpointLocked(m)
	}
	b, ok := e.backends[bk]
	if !ok {
		b = &backend{key: bk, provider: providerFor(m, e.cfg.Gate), sharedDeny: slices.Clone(e.shared), startup: m.Browser.StartupTimeout, resolver: e.cfg.Resolver,
			secretVars: e.secretVars(), listeners: &e.listeners, openings: make(chan struct{}, openingsAtOnce),
			lowersSpinners: e.stopSpinWatch != nil, pacing: e.cfg.Pacing}
		b.logMasker.Store(e.maskers[m])
		b.logger = slog.New(mask.NewLogHandler(e.logs, b.logMasker.Load))
		b.scope.Store(e.scopes[m])
		if m.Browser.Remote != nil {
			// A remote manifest has a backend per pool host or per
			// session: requests_per_second_per_host holds for every
			// session of the manifest, so they share one limiter.
			if e.limiters[m] == nil {
				e.limiters[m] = newHostLimiter(m, e.cfg.Pacing)
			}
			b.limiter = e.limiters[m]
		}
		e.backends[bk] = b
	}
	return b
}

// noticeKey names the session a notice is for: an MCP session's calls to
// the tools of one tool name (which survives a reload of its manifest).
type noticeKey struct{ mcp, tool string }

// manifestMaskers makes each manifest's masker, of its own secrets.
func manifestMaskers(ms []*toolclad.Manifest) map[*toolclad.Manifest]*mask.Masker {
	out := make(map[*toolclad.Manifest]*mask.Masker, len(ms))
	for _, m := range ms {
		out[m] = mask.FromManifests([]*toolclad.Manifest{m})
	}
	return out
}

// secretSets compiles each manifest's secrets.
func secretSets(ms []*toolclad.Manifest) (map[*toolclad.Manifest]*gate.Secrets, error) {
	out := make(map[*toolclad.Manifest]*gate.Secrets, len(ms))
	var errs []error
	for _, m := range ms {
		ss, err := gate.NewSecrets(m)
		errs = append(errs, err)
		out[m] = ss
	}
	return out, errors.Join(errs...)
}

// secretVars are the environment variables every manifest's secrets are
// read from; e.mu must be held.
func (e *Executor) secretVars() []string {
	var out []string
	for _, m := range e.cfg.Manifests {
		for _, sec := range m.Secrets {
			if sec.Env != "" {
				out = append(out, sec.Env)
			}
		}
	}
	return out
}

// Prelaunch starts, in the background, the browser of every manifest that
// launches one (connect = "launch"), so that a session's first call does
// not wait for it: serve calls it at start, while the MCP client
// initialises and the agent decides what to do. A launch that fails is
// logged, and tried again (and reported) at the first call that needs the
// browser. A live browser is attached to only when a call needs it.
func (e *Executor) Prelaunch() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.cfg.Manifests {
		if m.Browser.Connect != "launch" || m.Browser.Engine == toolclad.EngineHTTP {
			continue
		}
		b := e.backendLocked(m)
		go func() {
			if err := b.warm(); err != nil {
				e.cfg.Logger.Warn("the browser could not be started ahead of the first call; the first call tries again", "tool", m.Tool.Name, "error", err.Error())
			}
		}()
	}
}

// Warm gets a new MCP session's browser context and tab ready before its
// first call, in the background, when the daemon serves exactly one
// browser that it launches (with several, which the agent will use is not
// known yet; a live browser is attached to only when a call needs it).
// The session is the one the first call would make (the same MCP session,
// agent and manifest); if getting it ready fails, the first call tries
// again and reports why.
func (e *Executor) Warm(mcpID, agent string) {
	if !e.cfg.Warm {
		return
	}
	e.mu.Lock()
	var launch []*toolclad.Manifest
	for _, m := range e.cfg.Manifests {
		if m.Browser.Engine != toolclad.EngineHTTP {
			launch = append(launch, m)
		}
	}
	if len(launch) != 1 || launch[0].Browser.Connect != "launch" || e.closed {
		e.mu.Unlock()
		return
	}
	m := launch[0]
	k := sessionKey{mcpID, agent, m}
	s, ok := e.sessions[k]
	if _, ended := e.operatorEnded.of(k); !ok && ended {
		e.mu.Unlock()
		return // an operator ended it: no call of its runs again
	}
	if !ok {
		s = e.newSessionLocked(k, "")
		s.limits.unused = true
	}
	e.mu.Unlock()
	go func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		// Only a session that has not begun: one that has calls has its
		// tab, or closed it when it expired.
		if s.ended || !s.limits.unused {
			return
		}
		if err := s.ensureTab(); err != nil {
			return // the first call tries again, and says why
		}
		// A tab nobody uses is closed after idle_timeout_seconds (the
		// session stays new: its first call opens another).
		idle := m.Browser.IdleTimeout
		s.limits.unusedTimer = time.AfterFunc(idle, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.ended && s.limits.unused {
				s.closeTabs()
			}
		})
	}()
}

// GuardEndpoint makes an endpoint of the daemon's own (its HTTP front)
// unreachable from every page and every fetch, whatever the scopes grant,
// like the DevTools endpoints and egress proxies.
// An endpoint on every address (0.0.0.0, ::) is refused on loopback and
// on each of the machine's interface addresses as they are now
// (listeners).
func (e *Executor) GuardEndpoint(ap netip.AddrPort, what string) {
	e.listeners.add(ap, what)
}

// addLiveEndpoints registers the DevTools endpoint each live manifest
// names (a user's Chrome on 127.0.0.1:9222, say) as one of the daemon's
// endpoints from the start, so that no page of another backend reaches it
// even before its own backend attaches. (A DevToolsActivePort file names
// its port only when read, at attach.)
func (e *Executor) addLiveEndpoints(ms []*toolclad.Manifest) {
	for _, m := range ms {
		if m.Browser.Connect != "live" {
			continue
		}
		u, err := url.Parse(m.Browser.LiveEndpoint)
		if err != nil || u.Port() == "" {
			continue
		}
		what := "the DevTools endpoint of the browser of " + m.Tool.Name
		if ap, err := netip.ParseAddrPort(net.JoinHostPort(u.Hostname(), u.Port())); err == nil {
			e.listeners.add(ap, what)
		}
		// Where the browser listens is not known: its port is refused on
		// every address too (as its backend refuses it, devtoolsEndpoint).
		if port, err := strconv.ParseUint(u.Port(), 10, 16); err == nil && port != 0 {
			e.listeners.add(netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port)), what)
		}
	}
}

// endSessions ends each session, after a call in progress on it: a call
// in flight is stopped (and denied) first (stopCalls), and an approval
// the session's client was asked about is withdrawn from the operator's
// list (nothing could run under it any more). Requests its pages made
// after its last call that the request guard refused are recorded, in a
// record of their own, masked with each session's secrets; why says why
// the sessions end.
func (e *Executor) endSessions(ss []*session, why string) {
	deadline := time.Now().Add(saveEndWait) // for all of them together
	for _, s := range ss {                  // all before any lock is waited for
		s.stopCalls("session ended", "the session ended while this call was in flight ("+why+"); nothing was done")
	}
	for _, s := range ss {
		s.mu.Lock()
		if s.hold.id != "" && e.cfg.Approvals != nil {
			e.withdraw(s)
		}
		s.end(deadline)
		e.recordPending(s, "the session ended: "+why)
		s.mu.Unlock()
		e.dropOwnBrowser(s)
		e.cfg.Events.Publish(events.Event{Type: events.SessionEnded, Session: s.id, Agent: s.principal, Tool: s.manifest.Tool.Name, Reason: why})
	}
	if e.cfg.Evidence != nil && len(ss) > 0 {
		ids := make([]string, len(ss))
		for i, s := range ss {
			ids[i] = s.id
		}
		// A session left open in the log is one its daemon died in.
		if err := e.cfg.Evidence.SessionsEnded(ids...); err != nil {
			e.cfg.Logger.Error("sessions ended, but the log still names them open: the next start records them as ended by a crash", "error", err.Error())
		}
	}
}

// armTimers closes the session's browser context as soon as the idle or
// session timeout passes, not only at the next call, so an abandoned tab
// does not keep running. The decision itself is made on the clock, by
// Expiry; the timers only free resources.
func (e *Executor) armTimers(s *session) {
	b := &s.manifest.Browser
	expire := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended || s.limits.Expired != "" {
			return
		}
		if why := s.limits.Expiry(b, e.cfg.Now()); why != "" {
			s.limits.Expired = why
			s.closeTabs()
			if s.backend.oneSession() {
				s.backend.shutdown() // its next call starts a new session, with a browser of its own
			}
			s.downloads.stop(time.Now().Add(saveEndWait))
			e.recordPending(s, "the session expired ("+why+") and its browser context closed")
		}
	}
	if s.limits.idleTimer == nil {
		s.limits.idleTimer = time.AfterFunc(b.IdleTimeout, expire)
		s.limits.lifeTimer = time.AfterFunc(b.SessionTimeout, expire)
		return
	}
	s.limits.idleTimer.Reset(b.IdleTimeout)
}

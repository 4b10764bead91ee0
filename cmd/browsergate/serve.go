package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/operator"
	"github.com/browsergate/browsergate/daemon"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/executor/reload"
	"github.com/browsergate/browsergate/fleet"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

var serveCommand = &command{
	name: "serve",
	synopsis: `--manifest FILE [--manifest FILE...] --policies DIR --evidence FILE [--signing-key FILE] [--store URL [--evidence-ack local|central] [--anchor FILE]]
		[--tool-separator .|_] [--principal ID] [--log-level debug|info|warn|error] [--resolve NAME=IP[,IP...]...]
		[--approvals-socket PATH] [--approval-timeout 55s] [--approval-hook CMD] [--elicitation] [--watch] [--prelaunch=false]
		[--calls-at-once N] [--call-wait 30s] [--gate-listen IP:PORT]
		[--http ADDR --agents FILE [--tls-cert FILE --tls-key FILE] [--allowed-origin ORIGIN...] [--http-host NAME...]
		 [--max-sessions N] [--max-sessions-per-agent N] [--max-calls-per-session N] [--session-idle 30m] [--session-lease 30s] [--http-body-timeout 30s] [--operator-token-file FILE] [--stdio] [--replica ID] [--stateless-clients]]`,
	summary: "Serve the governed browser over MCP on stdio, or over streamable HTTP at /mcp (--http) for the agents of\n" +
		"an agents file: every call is checked against the manifests' scope and the Cedar policies, and recorded in\n" +
		"the evidence file. SIGHUP reloads manifests, policies and the agents file.",
	setup: serveFlags,
}

// serveOptions are serve's flags.
type serveOptions struct {
	manifests       multiFlag
	gateListen      string
	policies        string
	evidence        string
	signingKey      string
	store           string
	evidenceAck     string
	anchor          string
	sep             string
	principal       string
	logLevel        string
	approvalsSocket string
	approvalTimeout time.Duration
	approvalHook    string
	elicitation     bool
	prelaunch       bool
	watch           bool
	resolve         multiFlag

	http                  string
	agents                string
	tlsCert, tlsKey       string
	allowedOrigins        multiFlag
	httpHosts             multiFlag
	maxSessions, perAgent int
	callsPerSession       int
	callsAtOnce           int
	callWait              time.Duration
	sessionIdle           time.Duration
	sessionLease          time.Duration
	bodyWait              time.Duration
	operatorTokens        string
	stdio                 bool
	replica               string
	statelessClients      bool
}

func serveFlags(fs *flag.FlagSet) action {
	o := &serveOptions{}
	fs.Var(&o.manifests, "manifest", "ToolClad manifest `FILE` to serve (repeatable)")
	fs.StringVar(&o.policies, "policies", "", "Cedar policy `DIR` (with its schema, and its policy-tests.json run first)")
	fs.StringVar(&o.evidence, "evidence", "", "bbolt evidence `FILE` (created if missing)")
	fs.StringVar(&o.signingKey, "signing-key", "", "PKCS #8 PEM ed25519 private key `FILE` (evidence keygen): sign every session's evidence head and the log-wide head")
	fs.StringVar(&o.store, "store", "", "ship every evidence record to the central store at `URL` (postgres://USER@HOST[:PORT]/DB; the password from PGPASSFILE, ~/.pgpass or PGPASSWORD, never in the URL); the --evidence file stays the outbox written before each reply")
	fs.StringVar(&o.evidenceAck, "evidence-ack", "local", "reply to a call once its record is in the --evidence file (`local`), or only once the central store (--store) holds it too (central): then a replica whose disk is lost loses nothing it acknowledged")
	fs.StringVar(&o.anchor, "anchor", "", "anchor file `FILE` (TOML: the fleet's transparency log's dir on this replica and key_file, and its [copy] in an S3 bucket with Object Lock): run for the anchorer's lock and, holding it, anchor every record of the central store (--store), first restoring the log from the bucket when dir is behind it")
	fs.StringVar(&o.sep, "tool-separator", ".", "tool name separator `SEP`: \".\" (<tool>.<command>) or \"_\" for LLM APIs that allow only [A-Za-z0-9_-]")
	fs.StringVar(&o.principal, "principal", "local", "Cedar principal `ID` of the agent (Web::Agent)")
	fs.StringVar(&o.logLevel, "log-level", "info", "the least `LEVEL` logged: debug, info, warn or error (logs go to stderr)")
	fs.StringVar(&o.approvalsSocket, "approvals-socket", "", "Unix socket `PATH` of the operator approval channel (default: FILE.approvals.sock beside --evidence)")
	fs.DurationVar(&o.approvalTimeout, "approval-timeout", executor.DefaultApprovalTimeout, "how long a call waits for a human's approval before it is denied")
	fs.StringVar(&o.approvalHook, "approval-hook", "", "run `CMD` (with /bin/sh -c) for each call held for a human, with the question as JSON on stdin")
	fs.BoolVar(&o.elicitation, "elicitation", false, "also ask for approvals through MCP elicitation when the client supports it: only for a client that puts the question to a human, never one that could answer by itself (critical-tier commands always need the operator)")
	fs.BoolVar(&o.prelaunch, "prelaunch", true, "start each launched browser with the daemon, and (with one launched browser) each MCP session's browser context as its client lists the tools, so that a first call does not wait for them (false: at the first call that needs them)")
	fs.BoolVar(&o.watch, "watch", false, "reload manifests and policies when their files change (SIGHUP always reloads)")
	fs.StringVar(&o.http, "http", "", "serve MCP over streamable HTTP at `ADDR` (host:port; /mcp, and /healthz): loopback unless TLS is given")
	fs.StringVar(&o.agents, "agents", "", "agents `FILE` (TOML: [agents.<id>] token_sha256, groups): who may call over HTTP, as which Cedar principal")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "TLS certificate `FILE` (PEM) for --http")
	fs.StringVar(&o.tlsKey, "tls-key", "", "TLS private key `FILE` (PEM) for --http")
	fs.Var(&o.allowedOrigins, "allowed-origin", "an `ORIGIN` (scheme://host[:port]) whose web pages may call over HTTP (repeatable; by default none but the daemon's own)")
	fs.Var(&o.httpHosts, "http-host", "another `NAME` (host or host:port) HTTP requests may be addressed to, besides the listening address (repeatable)")
	fs.IntVar(&o.maxSessions, "max-sessions", daemon.DefaultMaxSessions, "most MCP sessions open over HTTP at once, in all")
	fs.IntVar(&o.perAgent, "max-sessions-per-agent", daemon.DefaultMaxSessionsPerAgent, "most MCP sessions one agent may have open over HTTP at once")
	fs.IntVar(&o.callsPerSession, "max-calls-per-session", daemon.DefaultMaxCallsPerSession, "most tool calls of one MCP session over HTTP under way at once (the one running and those waiting for it); those past it are refused at once")
	fs.IntVar(&o.callsAtOnce, "calls-at-once", executor.DefaultCallsPerCore*runtime.GOMAXPROCS(0), "most calls of browser sessions that run at once, all agents together; the others wait for their turn, first come first served")
	fs.DurationVar(&o.callWait, "call-wait", executor.DefaultCallWait, "how long a call waits for its turn (--calls-at-once) before it is refused as the machine saturated")
	fs.DurationVar(&o.sessionIdle, "session-idle", daemon.DefaultSessionIdle, "end an MCP session over HTTP after this long without a request")
	fs.DurationVar(&o.sessionLease, "session-lease", fleet.DefaultLeaseFor, "with --store: how long an MCP session counts against the fleet's --max-sessions and --max-sessions-per-agent after its replica last renewed its lease (every third of it): a killed replica's sessions free their places after this")
	fs.DurationVar(&o.bodyWait, "http-body-timeout", daemon.DefaultBodyWait, "how long an HTTP request's body may take to arrive")
	fs.StringVar(&o.operatorTokens, "operator-token-file", "", "operators' token `FILE` (NAME:TOKEN a line, mode 600): who may, over HTTP, watch /events and sign in to the console at /console/ (with the TOKEN part) to answer held calls and questions")
	fs.BoolVar(&o.statelessClients, "stateless-clients", false, "serve clients of MCP's 2026-07-28 revision as it asks, with no MCP session: their tools take a browser-session handle (browser_session_open gives one; the client copies it into the Mcp-Param-Browser-Session header, on which a load balancer routes); without it they fall back to the 2025-11-25 revision and MCP sessions (docs/daemon.md)")
	fs.StringVar(&o.replica, "replica", "", "this daemon's replica `ID` behind a load balancer (a lower-case letter, then up to 15 lower-case letters or digits): every MCP session id it hands out is ID-<random>, so the balancer routes on the Mcp-Session-Id header's start (docs/fleet.md)")
	fs.BoolVar(&o.stdio, "stdio", false, "with --http, also serve MCP on stdio (as --principal)")
	fs.StringVar(&o.gateListen, "gate-listen", "", "serve the egress gate for browsers on other hosts (connect = \"remote\") at `ADDR` (IP:port), an address the pool's hosts reach: each session's browser context goes out through it, with credentials of its own")
	fs.Var(&o.resolve, "resolve", "answer `NAME=IP[,IP...]` in the egress proxy instead of asking DNS for NAME (repeatable; tests, air-gapped setups)")
	return func(_ []string, _, stderr io.Writer) error { return o.run(stderr) }
}

// serveGCPercent is serve's GOGC when the environment sets none.
const serveGCPercent = 200

func (o *serveOptions) run(stderr io.Writer) error {
	// The daemon's live heap is a few tens of MB: a larger GC target
	// (unless the operator sets GOGC) trades a little memory for fewer
	// collections in the gate's path (BenchmarkDecideLatency's p99; 200
	// measured as the middle ground: docs/performance.md).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	if len(o.manifests) == 0 || o.policies == "" || o.evidence == "" {
		return fmt.Errorf("%w: serve needs --manifest, --policies and --evidence", errUsage)
	}
	if o.http == "" && (o.agents != "" || o.tlsCert != "" || o.tlsKey != "" || len(o.allowedOrigins) > 0 || len(o.httpHosts) > 0 || o.stdio || o.operatorTokens != "" || o.replica != "" || o.statelessClients) {
		return fmt.Errorf("%w: --agents, --tls-cert, --tls-key, --allowed-origin, --http-host, --operator-token-file, --stdio, --replica and --stateless-clients go with --http", errUsage)
	}
	if o.replica != "" {
		if err := daemon.CheckReplica(o.replica); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if o.http != "" && o.agents == "" {
		return fmt.Errorf("%w: --http needs --agents: every HTTP call is made by an agent the agents file names", errUsage)
	}
	if o.maxSessions <= 0 || o.perAgent <= 0 || o.callsPerSession <= 0 || o.sessionIdle <= 0 || o.bodyWait <= 0 || o.sessionLease <= 0 {
		return fmt.Errorf("%w: --max-sessions, --max-sessions-per-agent, --max-calls-per-session, --session-idle, --session-lease and --http-body-timeout must be positive", errUsage)
	}
	if o.callsAtOnce <= 0 || o.callWait <= 0 {
		return fmt.Errorf("%w: --calls-at-once and --call-wait must be positive", errUsage)
	}
	if err := o.checkStoreFlags(); err != nil {
		return err
	}
	if o.sep != "." && o.sep != "_" {
		return fmt.Errorf("%w: --tool-separator must be \".\" or \"_\"", errUsage)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %v", errUsage, err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	if o.replica != "" {
		// Every line says which replica wrote it, for logs gathered from
		// the whole fleet.
		logger = logger.With("replica", o.replica)
	}

	set, err := reload.Load(o.manifests, o.policies, nil)
	if err != nil {
		return err
	}
	// The dead ends check warns of: the daemon serves such a manifest, but
	// its operator should hear that a command can never work.
	for _, w := range deadEndWarnings(set.Manifests) {
		logger.Warn(w.String(), "file", w.File, "line", w.Line, "key", w.Key)
	}
	for _, w := range askExternalWarnings(set.Manifests, set.Policies) {
		logger.Warn(w)
	}
	if o.agents != "" {
		if set.Agents, err = toolclad.LoadAgents(o.agents); err != nil {
			return err
		}
	}
	if o.operatorTokens != "" {
		if set.Operators, err = toolclad.LoadOperators(o.operatorTokens); err != nil {
			return err
		}
		if err := toolclad.CheckApart(set.Operators, set.Agents); err != nil {
			return err
		}
	}
	if o.stdio && set.Agents.Has(o.principal) {
		return fmt.Errorf("%w: the agents file names an agent %q, the principal of the stdio agent (--principal): give one of them another name, or policies for the one would hold for the other", errUsage, o.principal)
	}
	hub := events.NewHub(0)
	evidenceOpts, err := evidenceOptions(o.signingKey)
	if err != nil {
		return err
	}
	store, err := evidence.Open(o.evidence, evidenceOpts)
	if err != nil {
		return err
	}
	defer store.Close()
	if store.Signed() && o.signingKey == "" {
		// Every call would act in the browser and then fail to be
		// recorded: refuse to start instead.
		return fmt.Errorf("%w: %s is a signed evidence log: start serve with its --signing-key, or give --evidence a new file", evidence.ErrNeedKey, o.evidence)
	}
	// Sessions its last daemon died in (killed, crashed) are recorded as
	// ended before anything else is: their records then ship too.
	if died, err := store.RecordDiedSessions(); err != nil {
		return fmt.Errorf("record the sessions the last daemon on %s died in: %w", o.evidence, err)
	} else if len(died) > 0 {
		logger.Warn("sessions the last daemon on this evidence file died in are recorded as ended", "sessions", died)
	}
	broker := approval.NewBroker(nil)
	stopCentral, centralGauges, err := startCentral(o, store, broker, hub, logger)
	if err != nil {
		return err
	}
	defer stopCentral()
	limits, err := openFleet(o, store.LogID(), logger)
	if err != nil {
		return err
	}
	defer limits.stop()
	resolver, err := staticResolver(o.resolve)
	if err != nil {
		return err
	}
	if o.approvalTimeout <= 0 {
		return fmt.Errorf("%w: --approval-timeout must be positive", errUsage)
	}
	if o.approvalsSocket == "" {
		o.approvalsSocket = operator.DefaultSocket(o.evidence)
	}
	ops, err := operator.Listen(operator.Config{Socket: o.approvalsSocket, Broker: broker, Logger: logger, Evidence: store.Backup})
	if err != nil {
		return err
	}
	defer ops.Close()
	gate, err := openGate(o.gateListen, set.Manifests, logger)
	if err != nil {
		return err
	}
	if gate != nil {
		defer gate.Close()
	}
	// The front, once it listens: the executor tells it of each evidence
	// session it opens, for the fleet's lease of its MCP session.
	var frontNow atomic.Pointer[daemon.Front]
	ex, err := executor.New(executor.Config{
		Manifests: set.Manifests, Policies: set.Policies, Evidence: store, Principal: o.principal, Logger: logger,
		Resolver: resolver, Approvals: broker, ApprovalTimeout: o.approvalTimeout, Elicitation: o.elicitation, Events: hub,
		UserAgent: "browsergate/" + version + " (governed AI agent; +https://github.com/browsergate/browsergate)",
		Warm:      o.prelaunch, CallsAtOnce: o.callsAtOnce, CallWait: o.callWait, Gate: gate, Pacing: limits.pacing(),
		SessionOpened: func(mcpID, evidenceID string) {
			if f := frontNow.Load(); f != nil {
				f.NoteEvidence(mcpID, evidenceID)
			}
		},
	})
	if err != nil {
		return err
	}
	defer ex.Close()
	if o.prelaunch {
		ex.Prelaunch()
	}

	// The instructions are the manifests' at start; a reload changes the
	// tools' descriptions (navigate's names the scope), not these.
	serverOpts := &mcp.ServerOptions{Instructions: toolclad.Instructions(set.Manifests, o.sep)}
	if o.replica != "" {
		serverOpts.GetSessionID = daemon.SessionIDs(o.replica)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "browsergate", Version: version}, serverOpts)
	tools, err := toolclad.NewToolSet(server, ex, toolclad.RegisterOptions{Separator: o.sep})
	if err != nil {
		return err
	}
	sets := toolclad.ToolSets{tools}
	// Over HTTP, clients of MCP's 2026-07-28 revision (no MCP sessions)
	// get a stateless server whose tools take a browser-session handle.
	var stateless *mcp.Server
	var handles *daemon.Handles
	if o.statelessClients {
		handles = daemon.NewHandles(ex.EndSessionFor)
		stateless = mcp.NewServer(&mcp.Implementation{Name: "browsergate", Version: version},
			&mcp.ServerOptions{Instructions: toolclad.HandleInstructions(set.Manifests, o.sep)})
		htools, err := toolclad.NewToolSet(stateless, ex, toolclad.RegisterOptions{Separator: o.sep, Handles: handles})
		if err != nil {
			return err
		}
		sets = append(sets, htools)
	}
	if err := sets.Set(set.Manifests); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rl, err := reload.New(reload.Config{Manifests: o.manifests, Policies: o.policies, Agents: o.agents, Operators: o.operatorTokens,
		Executor: ex, Tools: sets, Current: set, Logger: logger})
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				rl.Reload("SIGHUP")
			}
		}
	}()
	if o.watch {
		go rl.Watch(ctx, time.Second)
	}
	if o.approvalHook != "" {
		go runApprovalHook(ctx, hub, o.approvalHook, logger)
	}
	if o.http == "" {
		logger.Info("serving MCP on stdio", "manifests", len(set.Manifests), "policies", len(set.Policies.Policies()), "evidence", o.evidence, "approvals", o.approvalsSocket)
		if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			return fmt.Errorf("mcp: %w", err)
		}
		return nil
	}
	front, err := daemon.Listen(daemon.Config{
		Addr: o.http, TLSCert: o.tlsCert, TLSKey: o.tlsKey, Server: server, Stateless: stateless, Handles: handles,
		Agents:         func() *toolclad.Agents { return rl.Current().Agents },
		AllowedOrigins: o.allowedOrigins, AllowedHosts: o.httpHosts,
		MaxSessions: o.maxSessions, MaxSessionsPerAgent: o.perAgent, Leases: limits.leases(), MaxCallsPerSession: o.callsPerSession, SessionIdle: o.sessionIdle, BodyWait: o.bodyWait, Logger: logger,
		Operators: operatorsOf(rl, o.operatorTokens), Events: hub, Broker: broker, Evidence: store, Replica: o.replica, Gauges: centralGauges,
		EndSession: func(id, operator string) error {
			err := ex.EndByOperator(id, operator, approval.ChannelConsole)
			if errors.Is(err, executor.ErrEndNotRecorded) {
				return fmt.Errorf("%w: %w", daemon.ErrEndNotRecorded, err)
			}
			return err
		},
	})
	if err != nil {
		return err
	}
	frontNow.Store(front)
	// No page, and no fetch of the browserless engine, may reach the
	// daemon's own front, whatever the scope grants.
	if tcp, ok := front.Addr().(*net.TCPAddr); ok {
		ex.GuardEndpoint(tcp.AddrPort(), "browsergate's own HTTP front")
	}
	logger.Info("serving MCP over HTTP", "url", front.URL()+"/mcp", "agents", len(set.Agents.IDs()), "manifests", len(set.Manifests),
		"policies", len(set.Policies.Policies()), "evidence", o.evidence, "approvals", o.approvalsSocket)
	// The address is also printed alone, for scripts and tests that let
	// the system choose the port (--http 127.0.0.1:0).
	fmt.Fprintf(stderr, "browsergate: listening on %s\n", front.URL())
	if o.operatorTokens != "" {
		// Where to sign in, never with what: the token is the operator's
		// own line of the file, and this stream goes to logs (journald,
		// files) that more people read, and keep, than may answer held
		// calls.
		fmt.Fprintf(stderr, "browsergate: console at %s/console/login (sign in with your operator token: in your line NAME:TOKEN of %s, the part after NAME:)\n", front.URL(), o.operatorTokens)
	}
	if o.stdio {
		go func() {
			if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
				logger.Error("mcp on stdio ended", "error", err.Error())
			}
		}()
	}
	return front.Serve(ctx)
}

// staticResolver answers the --resolve names and asks DNS for the rest;
// nil (the proxy's default resolver) when there are none.
func staticResolver(mappings []string) (egress.Resolver, error) {
	if len(mappings) == 0 {
		return nil, nil
	}
	static := &egress.StaticResolver{Hosts: map[string][]netip.Addr{}, Fallback: net.DefaultResolver}
	for _, m := range mappings {
		name, addrs, err := egress.ParseHostMapping(m)
		if err != nil {
			return nil, fmt.Errorf("%w: --resolve: %v", errUsage, err)
		}
		static.Hosts[name] = addrs
	}
	return static, nil
}

// operatorsOf gives the HTTP front the operators in force (reloaded with
// the rest), or nil without an operator token file: no event stream and
// no console then.
func operatorsOf(rl *reload.Reloader, file string) func() *toolclad.Operators {
	if file == "" {
		return nil
	}
	return func() *toolclad.Operators { return rl.Current().Operators }
}

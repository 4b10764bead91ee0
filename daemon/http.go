// Package daemon is browsergate's HTTP front: MCP over streamable HTTP at
// /mcp for the agents of an agents file, each known by its bearer token,
// and a health check at /healthz.
//
// Every request but the health check must come to one of the daemon's own
// names (Host: DNS rebinding), and a request from a web page must come
// from an allowed origin (Origin). /mcp needs an agent's bearer token; the
// agent's id and groups reach the tools as the caller of each call
// (toolclad.Call.Agent), and the SDK keeps each MCP session to the agent
// that opened it. Sessions are limited per agent and in total.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// Config is the HTTP front's configuration.
type Config struct {
	// Addr is the address to listen on (host:port). A host that is not a
	// loopback address needs TLSCert and TLSKey.
	Addr            string
	TLSCert, TLSKey string
	// Server is the MCP server /mcp serves.
	Server *mcp.Server
	// Stateless, when set, is the server of /mcp's requests of clients of
	// MCP's 2026-07-28 revision, which keep no MCP session (handles.go):
	// its tools take the browser-session handles of Handles, which must
	// be set with it. Unset, such clients are told to fall back to an
	// earlier revision.
	Stateless *mcp.Server
	Handles   *Handles
	// Agents returns the agents file in force (it is reloaded with the
	// policies).
	Agents func() *toolclad.Agents
	// AllowedOrigins are the origins (scheme://host[:port]) whose web
	// pages may call; a request without an Origin header is not a web
	// page's. The daemon's own origin is always allowed.
	AllowedOrigins []string
	// AllowedHosts are more names (host or host:port) requests may be
	// addressed to, besides the address it listens on (and, on loopback,
	// localhost).
	AllowedHosts []string
	// MaxSessions and MaxSessionsPerAgent bound the MCP sessions open at
	// once (0: DefaultMaxSessions, DefaultMaxSessionsPerAgent).
	MaxSessions, MaxSessionsPerAgent int
	// Leases, when set, count the sessions of the whole fleet sharing a
	// store against MaxSessions and MaxSessionsPerAgent (leases.go).
	Leases Leases
	// MaxCallsPerSession bounds the tool calls of one MCP session under
	// way at once, the one running and those waiting for it (0:
	// DefaultMaxCallsPerSession).
	MaxCallsPerSession int
	// MaxRequestBytes bounds a request's body (0: DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// SessionIdle ends an MCP session without requests for this long (0:
	// DefaultSessionIdle).
	SessionIdle time.Duration
	// BodyWait bounds the reading of a request's body (0:
	// DefaultBodyWait).
	BodyWait time.Duration
	// Operators returns the operators in force, who may watch the event
	// stream (/events) and use the console (/console/); nil (the func, or
	// what it returns): nobody may. Their file is reloaded with the
	// agents file.
	Operators func() *toolclad.Operators
	// Events is what /events streams and the console follows.
	Events *events.Hub
	// Broker holds the calls waiting for a human, which the console lists
	// and answers; Evidence is the log the console reads.
	Broker   *approval.Broker
	Evidence *evidence.Store
	// EndSession ends the open session id for the operator named (the
	// console's End button; nil: the console cannot end sessions). After
	// it, the session's agent's next call is refused, saying so. An error
	// that wraps ErrEndNotRecorded says the session ended all the same.
	EndSession func(id, operator string) error
	// Replica is the daemon's replica id behind a load balancer (""
	// none): /healthz and /metrics name it, and a request for a session
	// of another replica is logged (the MCP server's session ids are
	// made with SessionIDs). Listen checks it with CheckReplica.
	Replica string
	Logger  *slog.Logger
	// Gauges are more gauges for /metrics (nil: none), read at each
	// scrape: the evidence shipper's, for one.
	Gauges func() []Gauge
	// Now is the clock of the console's sign-ins and of its back-off
	// after wrong tokens (nil: time.Now).
	Now func() time.Time
}

// Defaults of the limits.
const (
	DefaultMaxSessions         = 64
	DefaultMaxSessionsPerAgent = 8
	DefaultMaxRequestBytes     = 4 << 20
	DefaultSessionIdle         = 30 * time.Minute
)

// DefaultBodyWait is how long a request's body may take to arrive.
const DefaultBodyWait = 30 * time.Second

// ErrNeedsTLS refuses a listener beyond loopback without TLS: bearer
// tokens would cross the network in the clear.
var ErrNeedsTLS = errors.New("an address that is not loopback needs TLS (--tls-cert and --tls-key): agents' bearer tokens would cross the network in the clear")

// Front is the daemon's HTTP front, listening.
type Front struct {
	cfg      Config
	console  *console
	ln       net.Listener
	srv      *http.Server
	hosts    map[string]bool // allowed Host values, lower case
	own      map[string]bool // the daemon's own origins, lower case
	allowed  map[string]bool // the --allowed-origin ones (for /mcp only)
	sessions *sessionCount
}

// Listen checks the configuration and opens the listener; Serve serves it.
func Listen(cfg Config) (*Front, error) {
	if cfg.Server == nil || cfg.Agents == nil {
		return nil, errors.New("daemon: no MCP server or no agents")
	}
	if (cfg.Stateless == nil) != (cfg.Handles == nil) {
		return nil, errors.New("daemon: a stateless MCP server and its handles go together")
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if cfg.Replica != "" {
		if err := CheckReplica(cfg.Replica); err != nil {
			return nil, err
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.MaxSessions = orDefault(cfg.MaxSessions, DefaultMaxSessions)
	cfg.MaxSessionsPerAgent = orDefault(cfg.MaxSessionsPerAgent, DefaultMaxSessionsPerAgent)
	cfg.MaxCallsPerSession = orDefault(cfg.MaxCallsPerSession, DefaultMaxCallsPerSession)
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.BodyWait <= 0 {
		cfg.BodyWait = DefaultBodyWait
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want host:port (%v)", cfg.Addr, err)
	}
	loopback := isLoopback(host)
	if !loopback && cfg.TLSCert == "" {
		return nil, fmt.Errorf("--http %s: %w", cfg.Addr, ErrNeedsTLS)
	}
	var tlsConfig *tls.Config
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	f := &Front{cfg: cfg, ln: ln, sessions: &sessionCount{agent: map[string]string{},
		leases: fleetLeases{of: map[string]string{}, pending: map[string]string{}, early: map[string]*earlyNotes{}}}}
	f.hosts, f.own, f.allowed = f.names(loopback, tlsConfig != nil)
	calls := newCallLimit(cfg.MaxCallsPerSession, cfg.Logger)
	cfg.Server.AddReceivingMiddleware(calls.middleware)
	if cfg.Stateless != nil {
		cfg.Stateless.AddReceivingMiddleware(calls.middleware)
		cfg.Handles.mu.Lock()
		cfg.Handles.front = f
		cfg.Handles.mu.Unlock()
	}
	f.srv = &http.Server{
		Handler:           f.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	return f, nil
}

// Addr is the address the front listens on.
func (f *Front) Addr() net.Addr { return f.ln.Addr() }

// URL is the front's base URL (no trailing slash).
func (f *Front) URL() string {
	scheme := "http"
	if f.cfg.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + f.ln.Addr().String()
}

// Serve serves until ctx ends, then shuts down (waiting a little for the
// requests under way).
func (f *Front) Serve(ctx context.Context) error {
	if f.cfg.Handles != nil {
		hctx, stopExpiring := context.WithCancel(context.Background())
		defer stopExpiring()
		go f.cfg.Handles.expireIdle(hctx, f.cfg.SessionIdle)
	}
	if f.cfg.Leases != nil {
		rctx, stopRenewing := context.WithCancel(context.Background())
		renewed := make(chan struct{})
		go func() { f.renewLeases(rctx); close(renewed) }()
		defer func() { stopRenewing(); <-renewed }()
	}
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(f.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = f.srv.Shutdown(sctx)
		<-done
		return nil
	}
}

// names are the Host and Origin values requests may carry: the listening
// address, localhost on loopback, and the configured ones; the daemon's
// own origins, and the other origins allowed to call /mcp.
func (f *Front) names(loopback, tls bool) (hosts, own, allowed map[string]bool) {
	hosts, own, allowed = map[string]bool{}, map[string]bool{}, map[string]bool{}
	_, port, _ := net.SplitHostPort(f.ln.Addr().String())
	names := []string{f.ln.Addr().String()}
	if loopback {
		names = append(names, net.JoinHostPort("localhost", port), net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port))
	}
	for _, h := range f.cfg.AllowedHosts {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, port)
		}
		names = append(names, h)
	}
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	for _, h := range names {
		h = strings.ToLower(h)
		hosts[h] = true
		own[scheme+h] = true
	}
	for _, o := range f.cfg.AllowedOrigins {
		allowed[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	return hosts, own, allowed
}

// ownOrigin reports whether o is one of the daemon's own origins.
func (f *Front) ownOrigin(o string) bool { return f.own[strings.ToLower(o)] }

// Handler is the front's routes: /healthz open, the rest behind the Host
// and Origin checks (/ a page of links), /mcp behind an agent's token
// and the session limits, /events, /metrics and the console behind an
// operator's.
func (f *Front) Handler() http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.cfg.Server },
		&mcp.StreamableHTTPOptions{SessionTimeout: f.cfg.SessionIdle, MaxRequestBodyBytes: f.cfg.MaxRequestBytes, Logger: f.cfg.Logger,
			// The guard checks Host against the daemon's names (with
			// --http-host ones); the SDK's check would refuse those.
			DisableLocalhostProtection: true})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if f.cfg.Replica != "" {
			// Which replica answered, for the operator behind a load
			// balancer; the replica's name is no secret (every session
			// id it hands out starts with it).
			fmt.Fprintln(w, "ok replica", f.cfg.Replica)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	var mcpRoute http.Handler = f.foreignSessions(f.limitSessions(mcpHandler))
	if f.cfg.Stateless != nil {
		statefulRoute, statelessRoute := mcpRoute, f.statelessHandler()
		mcpRoute = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stateless(r) {
				statelessRoute.ServeHTTP(w, r)
				return
			}
			statefulRoute.ServeHTTP(w, r)
		})
	}
	mux.Handle("/mcp", f.guardFor(f.agent(mcpRoute), true))
	if f.cfg.Operators != nil && f.cfg.Events != nil {
		mux.Handle("GET /events", f.guard(http.HandlerFunc(f.serveEvents)))
		mux.Handle("GET /metrics", f.guard(http.HandlerFunc(f.serveMetrics)))
		f.console = newConsole(f)
		f.console.routes(mux)
	}
	mux.Handle("GET /{$}", f.guard(http.HandlerFunc(f.home)))
	mux.Handle("/", f.guard(http.NotFoundHandler()))
	return f.bodyLimits(mux)
}

// bodyLimits holds every request's body to the front's terms, whatever
// route answers it (a refusal of the guard, a redirect, a 404):
//
//   - A body must arrive within BodyWait: a client that trickles one
//     cannot hold a connection. (A tool call that outlasts it still
//     gets its answer: TestHTTPFrontUnderFlood makes one.)
//   - When the handler is done and the body was not read to its end (a
//     refusal), the rest is not waited for: net/http would read up to
//     256 KB more of it, before it sends the response and again as it
//     closes the body, with no deadline of its own (a refused request
//     whose body trickled got no answer, and held its connection, for as
//     long as the client liked). The connection is closed instead.
func (f *Front) bodyLimits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(f.cfg.BodyWait))
		body := &bodyWatch{ReadCloser: r.Body}
		r.Body = body
		next.ServeHTTP(w, r)
		if !body.done() {
			_ = rc.SetReadDeadline(time.Now())
		}
	})
}

// bodyWatch notes that its body was read to its end.
type bodyWatch struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

func (b *bodyWatch) done() bool { return b.eof.Load() }

// guard refuses a request addressed to another name than the daemon's
// (a DNS rebinding page reaches it under its own), and one a web page of
// another origin sends.
func (f *Front) guard(next http.Handler) http.Handler { return f.guardFor(next, false) }

// guardFor is guard; with mcp, the --allowed-origin pages may call too
// (CORS, for /mcp alone: the console and the event stream are the daemon's
// own pages').
func (f *Front) guardFor(next http.Handler, mcp bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.hosts[strings.ToLower(r.Host)] {
			f.cfg.Logger.Warn("http: request refused: not addressed to this daemon", "host", r.Host, "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, fmt.Sprintf("Host %q is not this daemon's name: requests must be addressed to it (--http-host adds names)", r.Host), http.StatusMisdirectedRequest)
			return
		}
		o := r.Header.Get("Origin")
		lo := strings.ToLower(o)
		if o != "" && !f.own[lo] && !(mcp && f.allowed[lo]) {
			f.cfg.Logger.Warn("http: request refused: foreign origin", "origin", o, "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, fmt.Sprintf("Origin %q may not call this daemon (--allowed-origin adds origins)", o), http.StatusForbidden)
			return
		}
		if mcp && f.allowed[lo] {
			// An allowed origin's page may call (CORS): its preflight is
			// answered here, before any token is asked for.
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", o)
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name, Mcp-Param-"+toolclad.HandleHeader)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// agent admits a request that carries an agent's bearer token, and hands
// the agent to the MCP handler (its id and groups, as the SDK's token
// info: the SDK then keeps each session to the agent that opened it).
func (f *Front) agent(next http.Handler) http.Handler {
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		a := f.cfg.Agents().Lookup(token)
		if a == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: a.ID, Extra: map[string]any{toolclad.AgentGroupsKey: slices.Clone(a.Groups)}}, nil
	}
	withInfo := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r.Header.Get("Authorization"))
		if ok && f.operators().Lookup(token) != "" {
			// An operator's token is not an agent's: an agent holding it
			// could answer its own held calls.
			f.cfg.Logger.Error("http: an operator's token was used as an agent's: refused", "remote", r.RemoteAddr)
			ok = false
		}
		if !ok || f.cfg.Agents().Lookup(token) == nil {
			f.cfg.Logger.Warn("http: request refused: no valid agent token", "remote", r.RemoteAddr, "token_given", ok)
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsergate"`)
			http.Error(w, "an agent's bearer token is required (Authorization: Bearer <token>; the agents file holds its SHA-256)", http.StatusUnauthorized)
			return
		}
		withInfo.ServeHTTP(w, r)
	})
}

// operators are the operators in force (nil: none).
func (f *Front) operators() *toolclad.Operators {
	if f.cfg.Operators == nil {
		return nil
	}
	return f.cfg.Operators()
}

// bearer is the token of an Authorization: Bearer header.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// sessionCount is the MCP sessions' agents, by session id, as the front
// saw them opened; the server's live sessions say which are still open.
type sessionCount struct {
	mu       sync.Mutex
	agent    map[string]string // session id -> agent
	reserved map[string]int    // agent -> sessions being opened
	pending  int
	leases   fleetLeases // with Config.Leases
}

// limitSessions refuses a request that opens an MCP session (one without
// an Mcp-Session-Id) when its agent, or the daemon, has as many open as
// allowed; nothing of the session is made.
//
// With Config.Leases, the limits count the fleet's sessions (leases.go).
func (f *Front) limitSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if f.cfg.Leases != nil && r.Method == http.MethodDelete && id != "" {
			next.ServeHTTP(&deleteWatch{ResponseWriter: w, ended: func() { f.closed(id) }}, r)
			return
		}
		if r.Method != http.MethodPost || id != "" {
			next.ServeHTTP(w, r)
			return
		}
		agent := auth.TokenInfoFromContext(r.Context()).UserID
		if f.cfg.Leases != nil {
			lease, msg := f.reserveLease(r.Context(), agent)
			if msg != "" {
				f.refuseSession(w, r, agent, msg)
				return
			}
			rec := &headerWatch{ResponseWriter: w, started: func(id string) { f.releaseLease(agent, lease, id) }}
			defer rec.start()
			next.ServeHTTP(rec, r)
			return
		}
		if msg := f.reserve(agent); msg != "" {
			f.refuseSession(w, r, agent, msg)
			return
		}
		// The reservation ends as the response starts: with the session
		// it opened, or none (the handler may stream for a while after).
		rec := &headerWatch{ResponseWriter: w, started: func(id string) { f.release(agent, id) }}
		defer rec.start()
		next.ServeHTTP(rec, r)
	})
}

// reserve counts a session being opened by agent, or says why it may not
// be.
func (f *Front) reserve(agent string) string {
	c := f.sessions
	c.mu.Lock()
	defer c.mu.Unlock()
	// The live sessions are read under the lock: read before it, a session
	// registered meanwhile would look ended and be forgotten.
	live := f.liveSessions()
	if c.reserved == nil {
		c.reserved = map[string]int{}
	}
	total, mine := c.pending, c.reserved[agent]
	for id, a := range c.agent {
		if !live[id] {
			delete(c.agent, id) // ended (closed by the client, or idle)
			continue
		}
		total++
		if a == agent {
			mine++
		}
	}
	if msg := sessionRefusal(agent, mine, total, f.cfg.MaxSessionsPerAgent, f.cfg.MaxSessions, f.cfg.SessionIdle); msg != "" {
		return msg
	}
	c.pending++
	c.reserved[agent]++
	return ""
}

// liveSessions are the ids of the sessions the server has.
func (f *Front) liveSessions() map[string]bool {
	live := map[string]bool{}
	for ss := range f.cfg.Server.Sessions() {
		live[ss.ID()] = true
	}
	if f.cfg.Handles != nil {
		f.cfg.Handles.live(live)
	}
	return live
}

// release ends a reservation; id is the session it opened ("": none).
func (f *Front) release(agent, id string) {
	c := f.sessions
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending--
	if c.reserved[agent]--; c.reserved[agent] <= 0 {
		delete(c.reserved, agent)
	}
	if id != "" {
		c.agent[id] = agent
	}
}

// headerWatch tells started, once, the Mcp-Session-Id a response gives
// ("": none) when the response starts (or the handler ends without one).
type headerWatch struct {
	http.ResponseWriter
	started func(sessionID string)
	done    bool
}

func (h *headerWatch) start() {
	if !h.done {
		h.done = true
		h.started(h.Header().Get("Mcp-Session-Id"))
	}
}

func (h *headerWatch) WriteHeader(code int) {
	h.start()
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerWatch) Write(b []byte) (int, error) {
	h.start()
	return h.ResponseWriter.Write(b)
}

// Flush lets the SDK stream its events through.
func (h *headerWatch) Flush() {
	h.start()
	if fl, ok := h.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (h *headerWatch) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

func orDefault(n, d int) int {
	if n <= 0 {
		return d
	}
	return n
}

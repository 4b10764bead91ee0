package toolclad

import (
	"regexp"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/browsergate/browsergate/scope"
)

// Manifest is one loaded and validated ToolClad browser-mode manifest. It is
// immutable after Load, so the executor and the MCP handlers share it
// without locks.
type Manifest struct {
	// Path is the file the manifest was loaded from, as given to Load.
	Path string
	// Source is the manifest's text as loaded: recorded with the evidence
	// so that a session can be replayed under the manifest it ran under.
	// (Secret values are not in it, only where they are read from.)
	Source []byte
	// Tool is the [tool] table.
	Tool Tool
	// Browser is the [browser] table with every default applied.
	Browser Browser
	// Output is the [output] table.
	Output Output
	// Commands are the declared commands, in file order; or, when the
	// manifest declares none, the implied ones (see ImpliedCommands).
	Commands []*Command
	// ImpliedCommands is true when the manifest has no [browser.commands]
	// and Commands are ToolClad's read-only browser-mode set, at its
	// documented risk tiers, so that `check` can say so.
	ImpliedCommands bool
	// Secrets are the [secrets.<NAME>] tables, by name, values read.
	Secrets []*Secret

	outputSchema *jsonschema.Resolved // resolved Output.Schema, nil when none
	scope        *scope.Scope         // Browser.Scope compiled; never nil after Parse
}

// Scope is the manifest's [browser.scope] compiled by the scope package
// when the manifest was loaded (so every scope problem was a load problem,
// at its file:line:col). A manifest without a scope gets one that allows
// no navigation. It is shared and immutable: to refuse the daemon's own
// endpoints as well, derive a copy with scope.Scope.WithDenied. Nil only
// for a Manifest not made by Load or Parse.
func (m *Manifest) Scope() *scope.Scope {
	if m == nil {
		return nil
	}
	return m.scope
}

// Command returns the declared command called name, or nil, so that callers
// never index Commands by hand.
func (m *Manifest) Command(name string) *Command {
	if m == nil {
		return nil
	}
	for _, c := range m.Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Tool is the [tool] table: identity, risk and policy wiring of the manifest.
type Tool struct {
	// Name names the MCP tools ("<name>.<command>"); it matches ^[a-z][a-z0-9_]*$.
	Name string
	// Version is free text (ToolClad uses semver).
	Version string
	// Mode is always "browser": the only mode browsergate runs.
	Mode string
	// Description is shown to operators; each command has its own for agents.
	Description string
	// RiskTier is one of low, medium, high, critical (default "low").
	RiskTier string
	// TimeoutSeconds bounds one call (default 60, as in ToolClad).
	TimeoutSeconds int
	// HumanApproval requires a human's approval for every command of the tool.
	HumanApproval bool
	// Cedar names the Cedar resource type and action of every request.
	Cedar CedarRef
	// Evidence configures what each evidence record carries.
	Evidence EvidenceConfig
}

// CedarRef is the [tool.cedar] table: which Cedar resource type and action
// the gate puts in each authorization request.
type CedarRef struct {
	// Resource is the entity type of the resource (default "Web::BrowserSession").
	Resource string
	// Action is the action id (default "browse").
	Action string
}

// EvidenceConfig is the [tool.evidence] table. Of ToolClad's other keys,
// capture = true and hash = "sha256" are accepted because they state what
// the evidence store always does (record every output, in a SHA-256
// chain); output_dir, capture = false and any other hash are refused at
// load, since the evidence goes to the daemon's bbolt file (serve
// --evidence) and nothing would honour them.
type EvidenceConfig struct {
	// Screenshots asks for a screenshot with every interaction's record.
	Screenshots bool
	// Recording is the operator's choice of a recording kept with each
	// call's record: RecordingScreencast (the frames the tab painted
	// during the call, JPEG), or "" for none. It is the manifest's, never
	// the agent's: no command turns it on or off.
	Recording string
}

// RecordingScreencast is the [tool.evidence] recording that keeps a
// screencast of every call with its record.
const RecordingScreencast = "screencast"

// The [browser] dialogs choices.
const (
	DialogsAsk     = "ask"
	DialogsDismiss = "dismiss"
	DialogsAccept  = "accept"
)

// Browser is the [browser] table: how the browser is obtained and bounded.
type Browser struct {
	// Engine is "cdp-direct" (chromedp; "cdp" is normalised to it) or
	// EngineHTTP (no browser: fetch_page, search_web, download_file).
	Engine string
	// Connect is "launch" (start a browser), "live" (attach to a running
	// one on this machine) or ConnectRemote (a browser on a pool host).
	Connect string
	// Context is where a session's tabs live: ContextUser (the default
	// for connect = "live") is the user's own browser context, with their
	// cookies, storage and tabs; ContextIsolated (always, for launch) is a
	// fresh browser context per session behind an egress proxy of its own.
	Context string
	// Headless applies to launched browsers (default true).
	Headless bool
	// Dialogs is what happens to a JavaScript dialog (alert, confirm,
	// prompt, beforeunload) a command opens: DialogsAsk (the default when
	// the manifest declares handle_dialog) keeps it open and tells the
	// agent, who answers with handle_dialog; DialogsDismiss (the default
	// otherwise) and DialogsAccept answer it at once and say so.
	Dialogs string
	// Files is the [browser.files] table.
	Files Files
	// Permissions is the [browser.permissions] table: the permissions
	// granted, by origin; nil grants none (every permission is denied).
	Permissions Permissions
	// Search is the [browser.search] table (engine = "http").
	Search Search
	// HTTP holds the browserless engine's limits ([browser.http], and
	// [browser.scope] requests_per_second_per_host).
	HTTP HTTPEngine
	// RequestsPerSecondPerHost is, for a browser (engine = "cdp-direct"),
	// [browser.scope] requests_per_second_per_host: the requests the
	// session's pages make to one host are spaced to this rate by the
	// request guard, a request waiting for its turn at most the call's
	// timeout_seconds. 0 (the default) turns pacing off. The browserless
	// engine's rate is HTTP.RequestsPerSecondPerHost.
	RequestsPerSecondPerHost float64
	// ExtractMode is the default content form: accessibility_tree, html or text.
	ExtractMode string
	// StartupTimeout bounds browser start or attach (default 60s).
	StartupTimeout time.Duration
	// SessionTimeout bounds a session's whole life (default 1800s).
	SessionTimeout time.Duration
	// IdleTimeout ends a session after this long without a call (default 300s).
	IdleTimeout time.Duration
	// MaxInteractions bounds the calls in one session (default 100).
	MaxInteractions int
	// OnExpiry is what a call to an expired session gets (a session past
	// session_timeout_seconds or idle_timeout_seconds, or one refused for
	// max_interactions): OnExpiryNewSession (the default) starts a new
	// session for it; OnExpiryRefuse refuses it and every later call of
	// the MCP session, which must reconnect.
	OnExpiry string
	// ExecutablePath is the browser binary for connect = "launch".
	ExecutablePath string
	// Remote is the [browser.remote] table: set exactly when Connect is
	// ConnectRemote.
	Remote *Remote
	// LiveEndpoint is where connect = "live" attaches: an http(s) DevTools
	// address, a ws(s) browser endpoint, or a DevToolsActivePort file path.
	LiveEndpoint string
	// Scope is the [browser.scope] table.
	Scope Scope
	// StateFields are the page-state fields observed around each call.
	StateFields []string
}

// ConnectRemote is [browser] connect = "remote": a browser on another
// host ([browser.remote]).
const ConnectRemote = "remote"

// The values of [browser] context.
const (
	ContextUser     = "user"
	ContextIsolated = "isolated"
)

// The values of [browser] on_expiry.
const (
	OnExpiryNewSession = "new_session"
	OnExpiryRefuse     = "refuse"
)

// Scope is the [browser.scope] table. Patterns are kept as written; the scope
// package parses and matches them, and Load has already compiled them
// (Manifest.Scope), so every entry here is one scope.New accepts.
type Scope struct {
	// AllowedDomains are the domain globs navigation may reach.
	AllowedDomains []string
	// BlockedDomains are refused even when allowed or external.
	BlockedDomains []string
	// AllowExternal allows domains outside AllowedDomains (still not blocked ones).
	AllowExternal bool
	// AskExternal (key ask_external, our extension; wcore-browser's
	// default_action = "ask" is read as the same) holds a navigate to a
	// public host outside AllowedDomains for a human's approval instead of
	// refusing it (scope.Config.AskExternal).
	AskExternal bool
	// AllowPrivateCIDRs (key allow_private_cidrs, our extension) grants
	// address ranges that are otherwise always blocked, such as loopback.
	AllowPrivateCIDRs []string
	// AllowedPorts (key allowed_ports, our extension) are the ports, as
	// "443" or ranges "8000-8999", that hosts outside every private grant
	// may be reached on; nil means the scope package's default, 80 and 443.
	// The manifest may write entries as integers or strings.
	AllowedPorts []string
	// DomainSets (table domain_sets, our extension) are named sets of
	// domain globs, for Cedar policies: `resource.url_domain in
	// Web::DomainSet::"<name>"`. They grant no access by themselves.
	DomainSets map[string][]string
}

// Output is the [output] table.
type Output struct {
	// Format is "json" or "text" (ToolClad's formats that fit a browser).
	Format string
	// Parser is ToolClad's parser name; only builtin:json and builtin:text.
	Parser string
	// Envelope is ToolClad's evidence-envelope flag (default true).
	Envelope bool
	// Schema, when set, is every tool's MCP output schema; replies are
	// checked against it. Numbers are float64, as after JSON decoding.
	Schema map[string]any
}

// Command is one declared browser command with its effective signature.
type Command struct {
	// Name is the built-in command name (navigate, click, ...).
	Name string
	// Description is the declared one, or empty (see ToolDescription).
	Description string
	// RiskTier is one of low, medium, high, critical (default "low").
	RiskTier string
	// HumanApproval requires a human's approval for each call.
	HumanApproval bool
	// AllowUserTabs (close_tab only): the command may close the user's
	// own tabs (live mode, the user's browser context), not only the tabs
	// the session opened.
	AllowUserTabs bool
	// RevealHeaders (network_request only) are the headers, lowercase,
	// that network_request shows rather than redacts: some of
	// RedactedHeaders (key reveal_headers).
	RevealHeaders []string
	// MaxContexts (new_context only) is how many browser contexts
	// new_context may open in a session besides its first
	// (DefaultMaxContexts unless declared).
	MaxContexts int
	// SecretAnswers (await_human only): every answer is kept from the
	// agent, which gets a placeholder to type, whatever its secret
	// argument says.
	SecretAnswers bool
	// SecretAnswerDomains (await_human only) are the domain globs of the
	// pages a secret answer may be asked for and typed on; empty: the
	// host of the page the question was asked on, whatever it is.
	SecretAnswerDomains []string
	// Args is the effective signature in built-in order: the built-in
	// arguments, narrowed by the declared ones when args are declared.
	Args []*Arg

	groups   []argGroup // exactly-one / at-most-one constraints
	builtin  *builtinCommand
	readOnly bool
}

// Arg returns the argument called name, or nil.
func (c *Command) Arg(name string) *Arg {
	for _, a := range c.Args {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// ReadOnly reports whether the command only observes the page, so that MCP
// clients can be told (readOnlyHint) and policies can treat it as low risk.
func (c *Command) ReadOnly() bool { return c.readOnly }

// ArgType is the type of a command argument.
type ArgType string

// The argument types.
const (
	TypeString   ArgType = "string"   // text; optional pattern and max_len
	TypeURL      ArgType = "url"      // absolute URL; schemes, scope_check
	TypeEnum     ArgType = "enum"     // one of Allowed
	TypeInteger  ArgType = "integer"  // int64; min, max, clamp
	TypeBoolean  ArgType = "boolean"  // JSON true or false
	TypeRef      ArgType = "ref"      // an element ref handed out by snapshot
	TypeSelector ArgType = "selector" // a CSS selector
	TypeList     ArgType = "list"     // a JSON array of Items, or of records of Fields; 1 to MaxItems long
)

// Arg is one typed argument of a command.
type Arg struct {
	Name        string
	Type        ArgType
	Required    bool
	Description string
	// Default is applied when the argument is absent: string, int64 or bool.
	Default any
	// Pattern must match (unanchored unless the pattern anchors itself). For
	// ref and selector it is checked in addition to the built-in checks.
	Pattern *regexp.Regexp
	// shape is the built-in pattern a manifest's declared Pattern narrows:
	// a value must match both, so a declared pattern can only narrow.
	shape *regexp.Regexp
	// MaxLen is the maximum length in characters (code points); 0 = none.
	MaxLen int
	// Schemes are the allowed URL schemes (lowercase).
	Schemes []string
	// ScopeCheck asks the executor to check the URL against the scope.
	ScopeCheck bool
	// Allowed are the enum values.
	Allowed []string
	// Min and Max bound integers; nil = unbounded.
	Min, Max *int64
	// Clamp brings out-of-range integers to the bound instead of refusing.
	// A declared argument clamps exactly when it says clamp = true (as in
	// ToolClad); an undeclared one keeps the built-in's choice (wait_for's
	// timeout_ms clamps when the manifest declares no args for wait_for).
	Clamp bool
	// Sanitize names opt-in sanitizers; only "injection" exists.
	Sanitize []string
	// Continuation marks an argument that only asks for more of what an
	// earlier reply gave (snapshot's and read's page, fetch_page's
	// start_index, the logs' since): it adds no capability, so a command
	// takes it whatever the manifest declares, with its built-in bounds,
	// and the call a reply offers for the rest is always one it accepts.
	Continuation bool
	// Items is what each element of a list is (TypeList): a value checked
	// as this argument (its name is the list's); nil when the elements
	// are records.
	Items *Arg
	// Fields are the members of each record of a list (TypeList with
	// Items nil), checked as arguments are, with FieldGroups over them;
	// a member not among them is refused.
	Fields      []Arg
	FieldGroups []argGroup
	// MaxItems bounds a list's length (TypeList; at least 1 element).
	MaxItems int
	// OptIn marks a built-in argument a command has only where a manifest
	// declares it in the command's args: a command declared without args,
	// or implied, keeps the signature it had before the argument existed,
	// so a manifest that declares nothing new offers the agent nothing new.
	OptIn bool
}

// argGroup is a constraint over several arguments of one command.
type argGroup struct {
	names      []string
	exactlyOne bool // else at most one
}

package toolclad

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/browsergate/browsergate/scope"
)

// Browser defaults, from ToolClad's browser-mode document.
const (
	defaultExecutablePath = "/usr/bin/chromium"
	defaultLiveEndpoint   = "http://127.0.0.1:9222"
)

func decodeBrowser(t *table, m *Manifest, wantCommands bool) {
	b := &m.Browser
	*b = Browser{
		Engine: "cdp-direct", Connect: "launch", Headless: true, ExtractMode: "accessibility_tree",
		StartupTimeout: 60 * time.Second, SessionTimeout: 1800 * time.Second, IdleTimeout: 300 * time.Second,
		MaxInteractions: 100, OnExpiry: OnExpiryNewSession, ExecutablePath: defaultExecutablePath, LiveEndpoint: defaultLiveEndpoint,
		StateFields: slices.Clone(stateFields),
	}

	var engine string
	if t.str("engine", &engine) {
		switch engine {
		case "cdp", "cdp-direct":
			b.Engine = "cdp-direct"
		case EngineHTTP:
			b.Engine = EngineHTTP
		case "playwright":
			t.r.errorf(t.at("engine"), "engine \"playwright\" is not supported: use \"cdp-direct\" (chromedp)")
		default:
			t.r.errorf(t.at("engine"), "unknown engine %q: use \"cdp-direct\" (or its alias \"cdp\"), or \"http\" for the browserless engine", engine)
		}
	}
	t.oneOf("connect", &b.Connect, "launch", "live", ConnectRemote)
	if b.Engine == EngineHTTP && b.Connect != "launch" {
		t.r.errorf(t.at("connect"), "engine = \"http\" runs no browser, so there is none to attach to: remove connect = %q", b.Connect)
	}
	// A live session works in the user's own browser context (their
	// cookies and signed-in sessions) unless the manifest asks for a
	// fresh, isolated one; a launched browser has no user to share with.
	if t.oneOf("context", &b.Context, ContextUser, ContextIsolated) && b.Connect != "live" && b.Context == ContextUser {
		t.r.errorf(t.at("context"), "%q needs connect = \"live\": a launched or remote browser has no user's context (its sessions are always isolated)", b.Context)
	}
	if b.Context == "" {
		b.Context = ContextIsolated
		if b.Connect == "live" {
			b.Context = ContextUser
		}
	}
	t.boolean("headless", &b.Headless)
	t.oneOf("dialogs", &b.Dialogs, DialogsAsk, DialogsDismiss, DialogsAccept)
	extractModes := []string{"accessibility_tree", "html", "text"}
	t.oneOf("extract_mode", &b.ExtractMode, extractModes...)
	// ToolClad's manifest-format document spells it [browser.defaults].
	defaults := t.sub("defaults")
	var mode string
	if defaults.oneOf("extract_mode", &mode, extractModes...) {
		if t.has("extract_mode") && mode != b.ExtractMode {
			t.r.errorf(defaults.at("extract_mode"), "contradicts browser.extract_mode %q", b.ExtractMode)
		}
		b.ExtractMode = mode
	}
	defaults.done()

	t.seconds("startup_timeout_seconds", &b.StartupTimeout)
	t.seconds("session_timeout_seconds", &b.SessionTimeout)
	t.seconds("idle_timeout_seconds", &b.IdleTimeout)
	var n int64
	if t.integer("max_interactions", &n) {
		if n < 1 || n > 1<<31-1 {
			t.r.errorf(t.at("max_interactions"), "must be at least 1, got %d", n)
		} else {
			b.MaxInteractions = int(n)
		}
	}
	t.oneOf("on_expiry", &b.OnExpiry, OnExpiryNewSession, OnExpiryRefuse)
	if t.str("executable_path", &b.ExecutablePath) && b.ExecutablePath == "" {
		t.r.errorf(t.at("executable_path"), "must not be empty")
	}
	if t.str("live_endpoint", &b.LiveEndpoint) {
		if msg := checkEndpoint(b.LiveEndpoint); msg != "" {
			t.r.errorf(t.at("live_endpoint"), "%s", msg)
		}
	}

	rate, rateSet := decodeScope(t.sub("scope"), m)
	decodeRemote(t, m)
	decodeFiles(t.sub("files"), m)
	perms := t.sub("permissions")
	decodePermissions(perms, m)
	perms.done()

	st := t.sub("state")
	var fields []string
	if st.strings("fields", &fields) {
		seen := make(map[string]bool)
		good := true
		for i, f := range fields {
			switch {
			case !slices.Contains(stateFields, f):
				st.r.errorf(st.at("fields").index(i), "unknown state field %q (known: %s)", f, strings.Join(stateFields, ", "))
				good = false
			case seen[f]:
				st.r.errorf(st.at("fields").index(i), "state field %q listed twice", f)
				good = false
			}
			seen[f] = true
		}
		if good {
			b.StateFields = fields
		}
	}
	st.done()

	decodeCommands(t.sub("commands"), m, wantCommands)
	checkFiles(t, m)
	decodeHTTPEngine(t, m, rate, t.at("scope").child("requests_per_second_per_host"), rateSet)
	// A dialog held for the agent needs handle_dialog to be answered: "ask"
	// is the default only where the manifest declares it.
	answers := m.Command("handle_dialog") != nil
	switch {
	case b.Dialogs == "" && answers:
		b.Dialogs = DialogsAsk
	case b.Dialogs == "":
		b.Dialogs = DialogsDismiss
	case b.Dialogs == DialogsAsk && !answers:
		t.r.errorf(t.at("dialogs"), "\"ask\" holds a dialog until the agent answers it with handle_dialog, which the manifest does not declare: declare [browser.commands.handle_dialog], or choose \"dismiss\" or \"accept\"")
	}
	t.done()
}

// checkEndpoint accepts an http(s) DevTools address, a ws(s) endpoint, or a
// file path (a DevToolsActivePort file).
func checkEndpoint(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if !strings.Contains(s, "://") {
		return "" // a path
	}
	u, err := url.Parse(s)
	if err != nil {
		return "does not parse as a URL"
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return "scheme " + u.Scheme + " is not one of http, https, ws, wss"
	}
	if u.Host == "" {
		return "has no host"
	}
	// The session's egress proxies listen on this machine's loopback, and
	// a DevTools endpoint elsewhere would be driven over the network: a
	// live browser must run on this machine.
	if h := u.Hostname(); h != "localhost" {
		if ip, err := netip.ParseAddr(h); err != nil || !ip.IsLoopback() {
			return fmt.Sprintf("host %s is not this machine's loopback (127.0.0.1, ::1 or localhost): a live browser runs on this machine, with its DevTools port on loopback; one on another host is connect = \"remote\" ([browser.remote])", h)
		}
	}
	return ""
}

// decodeScope reads [browser.scope] and compiles it with the scope
// package, which judges every entry: a problem scope.New finds is reported
// at the entry it names, so the loader and the daemon never disagree about
// what an entry means (a port-limited grant such as "10.0.0.0/8 ports
// 80,443" included).
func decodeScope(t *table, m *Manifest) (rate float64, rateSet bool) {
	s := &m.Browser.Scope
	// requests_per_second_per_host is the browserless engine's
	// (decodeHTTPEngine judges it): a number, integer or not.
	if v, ok := t.get("requests_per_second_per_host"); ok {
		switch n := v.(type) {
		case int64:
			rate, rateSet = float64(n), true
		case float64:
			rate, rateSet = n, true
		default:
			t.wrongType("requests_per_second_per_host", "a number", v)
		}
	}
	t.strings("allowed_domains", &s.AllowedDomains)
	t.strings("blocked_domains", &s.BlockedDomains)
	t.boolean("allow_external", &s.AllowExternal)
	decodeAskExternal(t, s, &m.Browser)
	t.strings("allow_private_cidrs", &s.AllowPrivateCIDRs)
	decodePorts(t, "allowed_ports", &s.AllowedPorts)
	if t.has("domain_sets") {
		sets := t.sub("domain_sets")
		s.DomainSets = map[string][]string{}
		for _, name := range slices.Sorted(maps.Keys(sets.m)) {
			if !scope.ValidSetName(name) {
				sets.used[name] = true
				t.r.errorf(sets.at(name), "%q cannot name a domain set: use lowercase letters, digits, '_' and '-'; \"allowed\", \"blocked\" and \"ask_external\" are taken by allowed_domains, blocked_domains and ask_external", name)
				continue
			}
			var pats []string
			if sets.strings(name, &pats) {
				s.DomainSets[name] = pats
			}
		}
		sets.done()
	}
	t.done()

	sc, err := scope.New(s.config())
	if err != nil {
		reportScopeErrors(t, err)
		return rate, rateSet
	}
	m.scope = sc
	return rate, rateSet
}

// config is the scope package's view of the table.
func (s *Scope) config() scope.Config {
	return scope.Config{
		AllowedDomains:    s.AllowedDomains,
		BlockedDomains:    s.BlockedDomains,
		AllowExternal:     s.AllowExternal,
		AskExternal:       s.AskExternal,
		AllowPrivateCIDRs: s.AllowPrivateCIDRs,
		AllowedPorts:      s.AllowedPorts,
		DomainSets:        s.DomainSets,
	}
}

// grantForms is the hint added to a refused allow_private_cidrs entry
// whose reason does not already suggest the fix.
const grantForms = `(an entry is "CIDR", "CIDR port N" or "CIDR ports N,M", like "10.0.0.0/8 ports 80,443")`

// reportScopeErrors reports each *scope.EntryError of scope.New's joined
// error at the entry it names, with scope's own reason.
func reportScopeErrors(t *table, err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ee *scope.EntryError
		if !errors.As(e, &ee) {
			t.r.errorf(t.path, "%v", e)
			continue
		}
		field, set, _ := strings.Cut(ee.Field, ".")
		path := t.at(field)
		if set != "" {
			path = path.child(set)
		}
		if ee.Index >= 0 {
			path = path.index(ee.Index)
		}
		msg := ee.Err.Error()
		if field == "allow_private_cidrs" && !errors.Is(ee.Err, scope.ErrMetadataGrant) && !strings.Contains(msg, "did you mean") {
			msg += " " + grantForms
		}
		t.r.errorf(path, "%s", msg)
	}
}

// domainPatterns reads a list of domain globs (the secrets' domains),
// reporting, at its place, each entry scope.ParsePattern refuses.
func domainPatterns(t *table, key string) ([]string, bool) {
	var pats []string
	if !t.strings(key, &pats) {
		return nil, false
	}
	for i, p := range pats {
		if _, err := scope.ParsePattern(p); err != nil {
			t.r.errorf(t.at(key).index(i), "%v", err)
		}
	}
	return pats, true
}

// decodePorts reads a list of ports and port ranges: integers (443) or
// strings ("443", "8000-8999"). An empty list is refused, since it would
// make every host unreachable; leaving the key out keeps the default.
func decodePorts(t *table, key string, dst *[]string) {
	v, ok := t.get(key)
	if !ok {
		return
	}
	arr, ok := v.([]any)
	if !ok {
		t.wrongType(key, "an array of ports (443) or port ranges (\"8000-8999\")", v)
		return
	}
	if len(arr) == 0 {
		t.r.errorf(t.at(key), "is empty, which would make every host unreachable; leave the key out for the default (80, 443)")
		return
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		var entry string
		switch e := e.(type) {
		case int64:
			entry = strconv.FormatInt(e, 10)
		case string:
			entry = e
		default:
			t.r.errorf(t.at(key).index(i), "wrong type: expected a port (443) or a port range (\"8000-8999\"), got %s", tomlType(e))
			continue
		}
		r, err := scope.ParsePortRange(entry)
		if err != nil {
			t.r.errorf(t.at(key).index(i), "%v", err)
			continue
		}
		out = append(out, r.String())
	}
	if len(out) == len(arr) {
		*dst = out
	}
}

func decodeOutput(t *table, m *Manifest) {
	o := &m.Output
	o.Envelope = true
	t.oneOf("format", &o.Format, "json", "text")
	t.oneOf("parser", &o.Parser, "builtin:json", "builtin:text")
	t.boolean("envelope", &o.Envelope)
	if v, ok := t.get("schema"); ok {
		if _, isTable := v.(map[string]any); !isTable {
			t.wrongType("schema", "a table", v)
		} else if schema, resolved, err := resolveSchema(v); err != nil {
			t.r.errorf(t.at("schema"), "not a valid JSON Schema: %v", err)
		} else {
			o.Schema, m.outputSchema = schema, resolved
		}
	}
	t.done()
}

// resolveSchema turns a TOML table into a JSON Schema (through JSON, so that
// numbers and nesting are as a client will see them) and resolves it once.
func resolveSchema(v any) (map[string]any, *jsonschema.Resolved, error) {
	if err := checkSchemaTypes(v); err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, nil, err
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, nil, err
	}
	var asMap map[string]any
	if err := json.Unmarshal(data, &asMap); err != nil {
		return nil, nil, err
	}
	return asMap, resolved, nil
}

// jsonTypes are the type names JSON Schema defines.
var jsonTypes = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// checkSchemaTypes rejects unknown type names anywhere in the schema, which
// the resolver lets through and which would make every result fail.
func checkSchemaTypes(v any) error {
	switch n := v.(type) {
	case map[string]any:
		for k, sub := range n {
			switch k {
			case "type":
				names, _ := sub.([]any)
				if s, ok := sub.(string); ok {
					names = []any{s}
				}
				for _, t := range names {
					if s, _ := t.(string); !slices.Contains(jsonTypes, s) {
						return fmt.Errorf("unknown type %v (JSON Schema types: %s)", t, strings.Join(jsonTypes, ", "))
					}
				}
			case "default", "const", "enum", "examples":
				// Values, not schemas.
			default:
				if err := checkSchemaTypes(sub); err != nil {
					return err
				}
			}
		}
	case []any:
		for _, sub := range n {
			if err := checkSchemaTypes(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

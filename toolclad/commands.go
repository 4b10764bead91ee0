package toolclad

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// decodeCommands reads [browser.commands.*] in file order. A browser
// manifest that declares none gets the implied commands, as ToolClad's own
// example manifests (chrome_live) expect.
func decodeCommands(t *table, m *Manifest, wantCommands bool) {
	if len(t.m) == 0 {
		if wantCommands && !t.r.hasProblemAt(t.path) {
			m.Commands, m.ImpliedCommands = impliedCommands(m.Browser.Engine), true
		}
		return
	}
	names := make([]string, 0, len(t.m))
	for name := range t.m {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		li, ci := t.r.pos.of(t.at(names[i]))
		lj, cj := t.r.pos.of(t.at(names[j]))
		if li != lj {
			return li < lj
		}
		if ci != cj {
			return ci < cj
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		b := lookupBuiltin(name)
		if b == nil {
			t.get(name)
			known := engineCommands(m.Browser.Engine)
			t.r.errorf(t.at(name), "unknown command%s (known: %s)", didYouMean(name, known), strings.Join(known, ", "))
			continue
		}
		if b.engine != engineOf(m.Browser.Engine) {
			t.get(name)
			if b.engine == EngineHTTP {
				t.r.errorf(t.at(name), "%s is a command of the browserless engine: it needs [browser] engine = \"http\"", name)
			} else {
				t.r.errorf(t.at(name), "%s needs a browser, and engine = \"http\" has none (its commands: %s)", name, strings.Join(engineCommands(EngineHTTP), ", "))
			}
			continue
		}
		m.Commands = append(m.Commands, decodeCommand(t.sub(name), b, m))
	}
	t.done()
}

// impliedCommands builds the commands of ImpliedCommands, each with its
// whole built-in signature at ToolClad's tier.
func impliedCommands(engine string) []*Command {
	var out []*Command
	for _, b := range builtins {
		if b.impliedTier != "" && b.engine == engineOf(engine) {
			c := b.fullCommand()
			c.RiskTier = b.impliedTier
			out = append(out, c)
		}
	}
	return out
}

// engineOf is the engine field of the built-ins a manifest's engine runs.
func engineOf(engine string) string {
	if engine == EngineHTTP {
		return EngineHTTP
	}
	return ""
}

// IsHTTPCommand reports whether a built-in command is the browserless
// engine's (engine = "http").
func IsHTTPCommand(name string) bool {
	b := lookupBuiltin(name)
	return b != nil && b.engine == EngineHTTP
}

// engineCommands are the built-in commands of an engine, in built-in order.
func engineCommands(engine string) []string {
	var names []string
	for _, b := range builtins {
		if b.engine == engineOf(engine) {
			names = append(names, b.name)
		}
	}
	return names
}

func decodeCommand(t *table, b *builtinCommand, m *Manifest) *Command {
	c := b.fullCommand()
	t.str("description", &c.Description)
	t.oneOf("risk_tier", &c.RiskTier, riskTiers...)
	t.boolean("human_approval", &c.HumanApproval)
	if b.name == "close_tab" {
		t.boolean("allow_user_tabs", &c.AllowUserTabs)
	}
	if b.name == "network_request" {
		decodeRevealHeaders(t, c)
	}
	if b.name == "new_context" {
		decodeMaxContexts(t, c)
	}
	if b.name == "await_human" {
		t.boolean("secret_answers", &c.SecretAnswers)
		decodeSecretAnswerDomains(t, c, m)
	}

	args := t.sub("args")
	if len(args.m) > 0 {
		c.Args = nil
		for _, name := range sortedKeys(args.m) {
			if why, ok := b.notHere[name]; ok {
				args.get(name)
				args.r.errorf(args.at(name), "%s does not take %s: %s", b.name, name, why)
				continue
			}
			if b.arg(name) == nil {
				args.get(name)
				known := "none"
				if len(b.args) > 0 {
					known = strings.Join(b.argNames(), ", ")
				}
				args.r.errorf(args.at(name), "unknown argument for %s%s (known: %s)", b.name, didYouMean(name, b.argNames()), known)
			}
		}
		for _, base := range b.args {
			switch {
			case args.has(base.Name) && base.Continuation:
				c.Args = append(c.Args, decodeContinuation(args.sub(base.Name), &base))
			case args.has(base.Name):
				c.Args = append(c.Args, decodeArg(args.sub(base.Name), &base))
			case base.Continuation:
				// Declared or not, a continuation is taken: without it the
				// rest of a long reply would be out of reach.
				c.Args = append(c.Args, base.clone())
			}
		}
		c.groups = narrowGroups(args, c)
	}
	args.done()
	t.done()
	return c
}

// decodeContinuation reads the declaration of a continuation argument,
// which may describe it (and name its type and required = false, as
// ToolClad writes every argument) but not narrow it: bounds that hid part of a reply would make
// the call its reply offers a refusal.
func decodeContinuation(t *table, base *Arg) *Arg {
	a := base.clone()
	var typ string
	if t.str("type", &typ) && ArgType(typ) != base.Type {
		t.r.errorf(t.at("type"), "type %q is not the built-in %s argument's type (%s)", typ, base.Name, base.Type)
	}
	t.str("description", &a.Description)
	var req bool
	if t.boolean("required", &req) && req {
		t.r.errorf(t.at("required"), "%s only asks for more of an earlier reply: it cannot be required", base.Name)
	}
	for _, key := range sortedKeys(t.m) {
		if !t.used[key] {
			t.get(key)
			t.r.errorf(t.at(key), "%s only asks for more of an earlier reply, so it is always accepted with its built-in bounds and no default: declare only its description, or leave it out", base.Name)
		}
	}
	t.done()
	return a
}

// narrowGroups keeps the one-of constraints over the declared arguments. An
// exactly-one group reduced to one argument makes it required; reduced to
// none, the command could never be called, which is a load error.
func narrowGroups(args *table, c *Command) []argGroup {
	var out []argGroup
	for _, g := range c.builtin.groups {
		var present []string
		for _, n := range g.names {
			if c.Arg(n) != nil {
				present = append(present, n)
			}
		}
		switch {
		case g.exactlyOne && len(present) == 0:
			args.r.errorf(args.path, "%s needs one of %s: declare at least one of them", c.Name, strings.Join(g.names, ", "))
		case g.exactlyOne && len(present) == 1:
			c.Arg(present[0]).Required = true
		case len(present) >= 2:
			out = append(out, argGroup{names: present, exactlyOne: g.exactlyOne})
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeArg narrows the built-in argument base by its declaration. Anything
// that would widen it is reported.
func decodeArg(t *table, base *Arg) *Arg {
	a := base.clone()
	// A declared argument clamps only when it says clamp = true, as in
	// ToolClad: it does not inherit the built-in's clamping, so declared
	// bounds refuse out-of-range values unless the manifest asks otherwise.
	a.Clamp = false
	r := t.r

	var typ string
	if t.str("type", &typ) {
		switch {
		case ArgType(typ) == base.Type:
		case typ == "string" && (base.Type == TypeSelector || base.Type == TypeRef):
			// ToolClad writes selectors as strings; the built-in checks stay.
		case typ == "enum" && base.Type == TypeString:
			a.Type, a.MaxLen = TypeEnum, 0
			if !t.has("allowed") {
				r.errorf(t.at("type"), "an enum argument needs allowed = [...]")
			}
		default:
			r.errorf(t.at("type"), "type %q is not compatible with the built-in %s argument (allowed: %s)",
				typ, base.Type, strings.Join(compatibleTypes(base.Type), ", "))
		}
	}

	var req bool
	if t.boolean("required", &req) {
		switch {
		case !req && base.Required:
			r.errorf(t.at("required"), "cannot make a required argument optional")
		case req:
			a.Required, a.Default = true, nil
		}
	}
	t.str("description", &a.Description)

	applies := func(key string, types ...ArgType) bool {
		if !t.has(key) {
			if slices.Contains(types, a.Type) {
				t.used[key] = true // valid here, so a misspelling of it is told of it
			}
			return false
		}
		if !slices.Contains(types, a.Type) {
			t.get(key)
			r.errorf(t.at(key), "does not apply to a %s argument", a.Type)
			return false
		}
		return true
	}
	stringish := []ArgType{TypeString, TypeURL, TypeSelector, TypeRef}

	var pattern string
	if applies("pattern", stringish...) && t.str("pattern", &pattern) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			r.errorf(t.at("pattern"), "bad regular expression: %v", err)
		} else {
			a.shape, a.Pattern = base.Pattern, re
		}
	}
	if applies("max_len", stringish...) {
		narrowLimit(t, "max_len", base.MaxLen, &a.MaxLen)
	}

	var schemes []string
	if applies("schemes", TypeURL) && t.strings("schemes", &schemes) {
		decodeSchemes(t, base, a, schemes)
	}
	var scope bool
	if applies("scope_check", TypeURL) && t.boolean("scope_check", &scope) {
		if base.ScopeCheck && !scope {
			r.errorf(t.at("scope_check"), "cannot be turned off: the URL would escape the manifest's scope")
		}
		a.ScopeCheck = base.ScopeCheck || scope
	}

	var allowed []string
	if applies("allowed", TypeEnum) && t.strings("allowed", &allowed) {
		decodeAllowed(t, base, a, allowed)
	}

	if applies("max_items", TypeList) {
		narrowLimit(t, "max_items", base.MaxItems, &a.MaxItems)
	}

	decodeBounds(t, base, a, applies("min", TypeInteger), applies("max", TypeInteger))
	if applies("clamp", TypeInteger) {
		t.boolean("clamp", &a.Clamp)
	}

	var sanitize []string
	if applies("sanitize", append(stringish, TypeEnum)...) && t.strings("sanitize", &sanitize) {
		for i, s := range sanitize {
			if s != SanitizeInjection {
				r.errorf(t.at("sanitize").index(i), "unknown sanitizer %q (known: %s)", s, SanitizeInjection)
			}
		}
		a.Sanitize = sanitize
	}

	decodeDefault(t, a)
	t.done()
	return a
}

// narrowLimit reads a declared key that narrows a built-in positive limit
// (max_len, max_items; base 0: none) into dst.
func narrowLimit(t *table, key string, base int, dst *int) {
	var n int64
	if !t.integer(key, &n) {
		return
	}
	switch {
	case n < 1:
		t.r.errorf(t.at(key), "must be at least 1, got %d", n)
	case base > 0 && n > int64(base):
		t.r.errorf(t.at(key), "%d exceeds the built-in limit %d", n, base)
	default:
		*dst = int(n)
	}
}

func compatibleTypes(t ArgType) []string {
	switch t {
	case TypeSelector, TypeRef:
		return []string{string(t), "string"}
	case TypeString:
		return []string{"string", "enum"}
	}
	return []string{string(t)}
}

func decodeSchemes(t *table, base, a *Arg, schemes []string) {
	if len(schemes) == 0 {
		t.r.errorf(t.at("schemes"), "must list at least one scheme (%s)", strings.Join(base.Schemes, ", "))
		return
	}
	var out []string
	for i, s := range schemes {
		s = strings.ToLower(s)
		if !slices.Contains(base.Schemes, s) {
			t.r.errorf(t.at("schemes").index(i), "scheme %q is not allowed (allowed: %s)", s, strings.Join(base.Schemes, ", "))
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	a.Schemes = out
}

func decodeAllowed(t *table, base, a *Arg, allowed []string) {
	if len(allowed) == 0 {
		t.r.errorf(t.at("allowed"), "must list at least one value")
		return
	}
	for i, v := range allowed {
		switch {
		case base.Type == TypeEnum && !slices.Contains(base.Allowed, v):
			t.r.errorf(t.at("allowed").index(i), "%q is not a built-in value (allowed: %s)", v, strings.Join(base.Allowed, ", "))
		case slices.Index(allowed, v) < i:
			t.r.errorf(t.at("allowed").index(i), "%q is listed twice", v)
		}
	}
	a.Allowed = allowed
}

// decodeBounds narrows min and max, which must stay inside the built-in
// bounds.
func decodeBounds(t *table, base, a *Arg, hasMin, hasMax bool) {
	inside := func(key string, v int64) bool {
		if base.Min != nil && v < *base.Min || base.Max != nil && v > *base.Max {
			t.r.errorf(t.at(key), "%d is outside the built-in bounds [%s, %s]", v, bound(base.Min), bound(base.Max))
			return false
		}
		return true
	}
	var v int64
	if hasMin && t.integer("min", &v) && inside("min", v) {
		a.Min = i64(v)
	}
	if hasMax && t.integer("max", &v) && inside("max", v) {
		a.Max = i64(v)
	}
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		key := "max"
		if !hasMax {
			key = "min"
		}
		t.r.errorf(t.at(key), "min %d is greater than max %d", *a.Min, *a.Max)
	}
}

func bound(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// decodeDefault reads the declared default, or re-checks the built-in one
// against the narrowed argument, so that the default always validates.
func decodeDefault(t *table, a *Arg) {
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		return // already reported; any default would be wrong
	}
	v, ok := t.get("default")
	if !ok {
		if a.Default != nil {
			if _, err := a.check(a.Default); err != nil {
				t.r.errorf(t.at("default"), "the built-in default %#v no longer validates (%s): declare a default", a.Default, err.Message)
			}
		}
		return
	}
	if a.Required {
		t.r.errorf(t.at("default"), "a required argument cannot have a default")
		return
	}
	if n, isInt := v.(int64); isInt && a.Type == TypeInteger &&
		(a.Min != nil && n < *a.Min || a.Max != nil && n > *a.Max) {
		// Checked strictly even when the argument clamps: a default outside
		// the bounds is a mistake in the manifest, not a value to correct.
		t.r.errorf(t.at("default"), "%d is outside the bounds [%s, %s]", n, bound(a.Min), bound(a.Max))
		return
	}
	// ToolClad writes boolean defaults as the strings "true" and "false".
	if s, isStr := v.(string); isStr && a.Type == TypeBoolean && (s == "true" || s == "false") {
		v = s == "true"
	}
	if _, isFloat := v.(float64); isFloat && a.Type == TypeInteger {
		t.wrongType("default", "an integer", v)
		return
	}
	cv, err := a.check(v)
	if err != nil {
		t.r.errorf(t.at("default"), "%#v %s", v, err.Message)
		return
	}
	a.Default = cv
}

package toolclad

// decodeAskExternal reads how [browser.scope] treats a public host outside
// allowed_domains: ask_external = true (ours) holds a navigate to it for a
// human; wcore-browser's default_action says the same in one key, "deny"
// (the default: refused), "ask" (held for a human) or "allow" (what
// allow_external = true says). Both spellings may be written only when
// they agree, and a scope cannot both allow such hosts and ask about
// them: each contradiction is reported at the keys involved. b is the
// browser the scope belongs to, its connect and context already read.
func decodeAskExternal(t *table, s *Scope, b *Browser) {
	askSet := t.boolean("ask_external", &s.AskExternal)
	var action string
	actionSet := t.oneOf("default_action", &action, "deny", "ask", "allow")
	allowSet := t.has("allow_external")
	if actionSet {
		ask, allow := action == "ask", action == "allow"
		switch {
		case askSet && s.AskExternal != ask:
			t.r.errorf(t.at("default_action"), "default_action = %q contradicts ask_external = %v: write one of them (default_action = \"ask\" is ask_external = true)", action, s.AskExternal)
			return
		case allowSet && s.AllowExternal != allow:
			t.r.errorf(t.at("default_action"), "default_action = %q contradicts allow_external = %v: write one of them (default_action = \"allow\" is allow_external = true)", action, s.AllowExternal)
			return
		}
		s.AskExternal, s.AllowExternal = ask, allow
	}
	if s.AskExternal && s.AllowExternal {
		at := "ask_external"
		if !askSet {
			at = "default_action"
		}
		t.r.errorf(t.at(at), "ask_external = true asks a human about hosts outside allowed_domains, and allow_external = true already lets the agent reach them without asking: keep one")
	}
	if s.AskExternal && b.Connect == "live" && b.Context == ContextUser {
		// The user's own browser context has no egress proxy of
		// browsergate's: request interception judges its URLs by name,
		// and nothing judges the addresses a name resolves to. An
		// approved host's name (a wildcard DNS name that spells a private
		// address, a rebinding name) would reach whatever it resolves to.
		at, key := "ask_external", "ask_external = true"
		if !askSet {
			at, key = "default_action", "default_action = \"ask\""
		}
		t.r.errorf(t.at(at), "%s needs the session's egress proxy, which checks every address an approved host resolves to, and connect = \"live\" with context = \"user\" (live mode's default) has none: write context = \"isolated\" in [browser] (a fresh browser context behind an egress proxy of its own), or do not ask", key)
	}
}

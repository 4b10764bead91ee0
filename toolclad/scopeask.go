package toolclad

// decodeAskExternal reads how [browser.scope] treats a public host outside
// allowed_domains: ask_external = true (ours) holds a navigate to it for a
// human; wcore-browser's default_action says the same in one key, "deny"
// (the default: refused), "ask" (held for a human) or "allow" (what
// allow_external = true says). Both spellings may be written only when
// they agree, and a scope cannot both allow such hosts and ask about
// them: each contradiction is reported at the keys involved.
func decodeAskExternal(t *table, s *Scope) {
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
}

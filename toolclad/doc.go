// Package toolclad loads ToolClad browser-mode manifests, validates the
// arguments of each call against the command's typed signature, describes
// each command as a JSON Schema, and publishes the commands as MCP tools.
//
// # Manifests
//
// A manifest is a TOML file in ToolClad's browser-mode format (see
// examples/). Load is strict: an unknown key, a value of the wrong type, an
// impossible bound or an unsupported engine is an error, and every problem
// in the file is reported, each as "file:line:col: key.path: message"
// (a [*LoadError]). Positions come from go-toml/v2's unstable parser, which
// keeps the byte range of every key; the values themselves are decoded by
// go-toml/v2's ordinary decoder, so the TOML semantics (dotted keys, inline
// tables, duplicate keys) are the library's, not ours.
//
// Defaults follow ToolClad's browser-mode document: engine "cdp-direct"
// (chromedp; "cdp" is an alias), connect "launch", headless, extract_mode
// "accessibility_tree", startup 60 s, session 1800 s, idle 300 s, 100
// interactions, all seven state fields. ToolClad's manifest-format document
// also places extract_mode under [browser.defaults]; both spellings load.
// A manifest with no [browser.scope] loads fine and allows no navigation
// (deny by default is the scope package's business, not an error here).
//
// Load compiles the scope too ([Manifest.Scope]): every [browser.scope]
// entry is judged by the scope package itself, so the loader and the
// daemon never disagree about an entry (a port-limited grant such as
// "10.0.0.0/8 ports 80,443" loads), and each entry it refuses is a problem
// at that entry's file:line:col with scope's reason.
//
// ToolClad's [tool.evidence] keys are honoured or refused, never ignored:
// screenshots works; capture = true and hash = "sha256" state what the
// evidence store always does and load; output_dir, capture = false and any
// other hash are refused, because the evidence goes to the daemon's
// hash-chained bbolt file (serve --evidence) and always records the output.
// Likewise a mode other than "browser" and an engine other than
// "cdp-direct" (or its alias "cdp") are refused.
//
// # Commands and their arguments
//
// Commands are built in (see [BuiltinCommands]): each has a default typed
// signature that the executor knows how to run. A manifest that declares no
// [browser.commands] gets the read-only commands of ToolClad's browser-mode
// set (see [ImpliedCommands]) at the risk tiers ToolClad documents,
// navigate medium and the others low, and [Manifest.ImpliedCommands] says
// so; commands that change a page's data (click, type_text, submit_form,
// execute_js) are never implied. A command declared without
// args gets its whole built-in signature. A command declared with args
// exposes only the declared ones: the declaration is an allow-list, so an
// operator can, for example, offer click by element ref only. Declared args
// may only narrow the built-in ones (a subset of schemes, tighter bounds, an
// extra pattern, required instead of optional); anything that would widen
// them (turning off navigate's scope check, an unknown argument, bounds
// outside the built-in ones) is a load error. A declared integer argument
// clamps out-of-range values only when it says clamp = true, as in
// ToolClad; otherwise it refuses them, whatever the built-in does.
//
// Argument values are checked by [Command.Validate], which returns canonical
// Go values (string, int64, bool) with defaults applied, or [*ArgError]
// values naming the argument and the rule. JSON null counts as absent, so
// clients that send null for optional arguments work. Strings are not
// trimmed: what the agent typed is what is typed into the page.
//
// The opt-in sanitizer sanitize = ["injection"] rejects NUL and the other C0
// control characters except TAB, LF and CR, and DEL; for url arguments it
// also rejects the javascript:, vbscript: and data: schemes, looking at the
// URL the way a browser does (leading spaces and controls stripped, TAB/LF/CR
// removed, case folded). It deliberately does not reject shell
// metacharacters as ToolClad's CLI types do: nothing here reaches a shell,
// and quotes, brackets, '<', '>', ';', '&', '?', '=' and '%' are ordinary
// in CSS selectors, query strings and text.
//
// # MCP tools
//
// [Register] adds one MCP tool per command, named "<tool>.<command>" (or
// "<tool>_<command>" for LLM APIs that accept only [A-Za-z0-9_-]). The
// handler validates the arguments itself and always calls the [Runner],
// also when validation failed, so that the refusal is recorded as evidence.
package toolclad

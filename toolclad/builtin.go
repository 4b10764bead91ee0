package toolclad

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
)

// Built-in limits. They bound what a manifest may declare, so a manifest can
// only narrow them.
const (
	// selectorMaxLen bounds CSS selectors: long enough for any hand-written
	// or generated selector, short enough to keep the gate cheap.
	selectorMaxLen = 1024
	// urlMaxLen bounds URLs given to navigate (Chromium's own limit is 2 MB;
	// no page an agent should reach needs more than this).
	urlMaxLen = 8192
	// textMaxLen bounds typed text and script expressions.
	textMaxLen = 65536
	// questionMaxLen bounds a question to the operator: a few sentences,
	// shown whole.
	questionMaxLen = 2000
)

// refPattern is the shape of the element refs that snapshot hands out.
var refPattern = regexp.MustCompile(`^e[0-9]{1,6}$`)

// builtinCommand is a command the executor implements, with its default
// signature.
type builtinCommand struct {
	name        string
	description string
	args        []Arg
	groups      []argGroup
	readOnly    bool
	// impliedTier is the risk tier ToolClad's browser-mode document gives
	// the command when a manifest declares no commands at all; "" for the
	// commands that are never implied (every one that changes a page's
	// data: click, type_text, submit_form, execute_js).
	impliedTier string
	// tier is the command's risk tier when a manifest declares it without
	// a risk_tier of its own ("" is "low").
	tier string
	// engine is the engine that runs the command: "" for the browser's
	// (cdp-direct), EngineHTTP for the browserless engine's.
	engine string
	// notHere are arguments other tools give the command that browsergate
	// deliberately does not take, each with the reason: a manifest that
	// declares one gets a load error that says why, and an agent that
	// passes one a refusal that says why, rather than "unknown argument".
	notHere map[string]string
}

// confinedDownloads is why a download takes no directory of the agent's
// choosing (wcore-browser's dest_path, GAIA's save_to).
const confinedDownloads = "browsergate saves downloads only into the manifest's download directory ([browser.files] download_dir), under a safe name, never overwriting: where a file goes is the manifest's choice, not the call's"

func i64(v int64) *int64 { return &v }

func refArg(desc string) Arg {
	return Arg{Name: "ref", Type: TypeRef, Description: desc}
}

// tabPattern is the shape of the tab ids that list_tabs hands out.
var tabPattern = regexp.MustCompile(`^t[0-9]{1,6}$`)

func tabArg(desc string) Arg {
	return Arg{Name: "tab", Type: TypeString, Required: true, MaxLen: 8, Pattern: tabPattern, Description: desc}
}

func selectorArg(desc string) Arg {
	return Arg{Name: "selector", Type: TypeSelector, MaxLen: selectorMaxLen, Description: desc}
}

// optIn marks a built-in argument opt-in (Arg.OptIn).
func optIn(a Arg) Arg {
	a.OptIn = true
	return a
}

// screenshot's scale bounds, in percent: an image is at most twice the
// page's CSS pixels each way (four times today's full-page image, which
// bounds the reply and the evidence blob as today's bound them), and at
// least a tenth, below which nothing on a page can be read.
const (
	screenshotMinScale = 10
	screenshotMaxScale = 200
)

// builtins is the table of commands, in the order the documentation lists
// them. A command name outside this table is a load error: the executor
// would not know how to run it. The implied tiers are those of the
// "Commands Reference Table" in ToolClad's docs/browser-mode.md (navigate
// medium, the others low); scroll, missing from that table, is low as in
// the same document's scroll example.
var builtins = []*builtinCommand{
	{
		name:        "navigate",
		impliedTier: "medium",
		description: "Navigate the current tab to a URL. The URL must be inside the manifest's scope.",
		args: []Arg{{
			Name: "url", Type: TypeURL, Required: true, ScopeCheck: true, MaxLen: urlMaxLen,
			Schemes: []string{"http", "https"}, Description: "Absolute URL to open.",
		}},
	},
	{
		name:        "snapshot",
		impliedTier: "low",
		description: "Get the current page as text, one line per block (## headings, - list items, | table rows |, fenced code), with a ref on every element you can act on: [link text](e4 /target), [button \"Save\" e5], [textbox \"Email\" e6 value=\"...\"]. Pass refs to click, type_text and the other commands. A page longer than max_chars comes in pages: the reply ends with the call for the next one.",
		args: []Arg{
			selectorArg("Optional CSS selector to scope the snapshot to one element."),
			{Name: "page", Type: TypeInteger, Min: i64(1), Max: i64(10000), Continuation: true, Description: "Page of the latest snapshot to return (its replies say how many there are)."},
			{Name: "max_chars", Type: TypeInteger, Min: i64(1000), Max: i64(1000000), Description: "Longest reply, in characters (default 200000); a longer snapshot comes in pages."},
		},
		readOnly: true,
	},
	{
		name:        "click",
		description: "Click an element, given by its snapshot ref or a CSS selector.",
		args: []Arg{
			refArg("Element ref from the latest snapshot (give ref or selector, not both)."),
			selectorArg("CSS selector of the element (give ref or selector, not both)."),
			{Name: "button", Type: TypeEnum, Allowed: []string{"left", "right", "middle"}, OptIn: true, Description: "Mouse button (default left)."},
			{Name: "click_count", Type: TypeInteger, Min: i64(1), Max: i64(3), OptIn: true, Description: "2: a double click."},
			{Name: "modifiers", Type: TypeString, MaxLen: 64, Pattern: modifiersPattern, OptIn: true, Description: "Keys held, joined by +: Alt, Control, Meta, Shift."},
		},
		groups: []argGroup{{names: []string{"ref", "selector"}, exactlyOne: true}},
	},
	{
		name:        "type_text",
		description: "Type text into an element (by ref or selector), or into the focused element when neither is given.",
		args: []Arg{
			refArg("Element ref from the latest snapshot (optional; not with selector)."),
			selectorArg("CSS selector of the element (optional; not with ref)."),
			{Name: "text", Type: TypeString, Required: true, MaxLen: textMaxLen, Description: "Text to type."},
		},
		groups: []argGroup{{names: []string{"ref", "selector"}}},
	},
	{
		name:        "submit_form",
		description: "Submit a form: the one containing the given element, else the focused element's form, else the page's only form.",
		args: []Arg{
			refArg("Ref of the form or of an element inside it (optional; not with selector)."),
			selectorArg("CSS selector of the form or of an element inside it (optional; not with ref)."),
		},
		groups: []argGroup{{names: []string{"ref", "selector"}}},
	},
	{
		name:        "screenshot",
		impliedTier: "low",
		description: "Capture a PNG screenshot of the current page.",
		args: []Arg{
			{Name: "full_page", Type: TypeBoolean, Default: false, Description: "Capture the whole page instead of the viewport."},
			optIn(refArg("Element ref from the latest snapshot: capture that element only.")),
			optIn(selectorArg("CSS selector of the element to capture.")),
			{Name: "format", Type: TypeEnum, Allowed: []string{"png", "jpeg", "webp"}, OptIn: true, Description: "png (default), jpeg or webp."},
			{Name: "quality", Type: TypeInteger, Min: i64(0), Max: i64(100), OptIn: true, Description: "jpeg or webp quality, 0-100."},
			{Name: "scale", Type: TypeInteger, Min: i64(screenshotMinScale), Max: i64(screenshotMaxScale), OptIn: true,
				Description: fmt.Sprintf("Image size in percent of CSS pixels, %d-%d (default 100).", screenshotMinScale, screenshotMaxScale)},
		},
		groups:   []argGroup{{names: []string{"ref", "selector"}}},
		readOnly: true,
	},
	{
		name:        "go_back",
		impliedTier: "low",
		description: "Navigate back in the tab's history.",
	},
	{
		name:        "wait_for",
		impliedTier: "low",
		description: "Wait until an element matching a selector, some text, or an element of a role (with an accessible name) appears on the page.",
		args: []Arg{
			selectorArg("CSS selector to wait for (give one of selector, text, role)."),
			{Name: "text", Type: TypeString, MaxLen: textMaxLen, Description: "Text to wait for (give one of selector, text, role)."},
			{Name: "role", Type: TypeString, MaxLen: 40, Pattern: rolePattern, Description: "ARIA role to wait for, as the snapshot names it: button, link, heading, dialog, ... (give one of selector, text, role)."},
			{Name: "name", Type: TypeString, MaxLen: 1024, Description: "With role: the element's accessible name, exactly."},
			{
				Name: "timeout_ms", Type: TypeInteger, Min: i64(100), Max: i64(30000), Default: int64(5000), Clamp: true,
				Description: "How long to wait, in milliseconds.",
			},
			{Name: "text_gone", Type: TypeString, MaxLen: textMaxLen, OptIn: true, Description: "Text to wait for to disappear."},
			{Name: "time_ms", Type: TypeInteger, Min: i64(1), Max: i64(30000), Clamp: true, OptIn: true, Description: "Just wait this many milliseconds."},
		},
		groups:   []argGroup{{names: []string{"selector", "text", "text_gone", "role", "time_ms"}, exactlyOne: true}},
		readOnly: true,
	},
	{
		name:        "find",
		description: "Find the elements whose text or accessible name contains some text, each with its ref, without a whole snapshot. Its refs replace those of the latest snapshot.",
		args: []Arg{
			{Name: "text", Type: TypeString, Required: true, MaxLen: 1024, Description: "Text to look for (case-insensitive)."},
		},
		readOnly: true,
	},
	{
		name:        "extract_html",
		impliedTier: "low",
		description: "Get the HTML of the element matching a CSS selector, or of the whole document.",
		args:        []Arg{selectorArg("CSS selector of the element (optional: whole document).")},
		readOnly:    true,
	},
	{
		name:        "list_tabs",
		impliedTier: "low",
		description: "List the session's tabs and, in the user's browser context, the user's tabs whose URL is in scope (each with a short id).",
		readOnly:    true,
	},
	{
		name:        "switch_tab",
		description: "Make a tab from list_tabs the current tab. A user's own tab (live mode, the user's browser context) must be inside the scope; it is put under the session's guard and reloaded first.",
		args:        []Arg{tabArg("Tab id from list_tabs (t1, t2, ...).")},
	},
	{
		name:        "new_tab",
		description: "Open a new tab and make it the current tab: at a URL, which must be inside the manifest's scope, or blank (about:blank) without one.",
		args: []Arg{{
			Name: "url", Type: TypeURL, ScopeCheck: true, MaxLen: urlMaxLen,
			Schemes: []string{"http", "https"}, Description: "Absolute URL to open (optional: without it the tab is blank).",
		}},
	},
	{
		name:        "close_tab",
		description: "Close a tab from list_tabs that the session opened (or a page opened). A user's own tab only if the manifest allows it.",
		args:        []Arg{tabArg("Tab id from list_tabs (t1, t2, ...).")},
	},
	{
		name:        "execute_js",
		description: "Evaluate a JavaScript expression in the page and return its value.",
		args: []Arg{
			{Name: "expression", Type: TypeString, Required: true, MaxLen: textMaxLen, Description: "JavaScript expression to evaluate."},
			optIn(refArg("Element ref from the latest snapshot; expression is then a function called with it: (el) => el.textContent.")),
			{Name: "frame", Type: TypeSelector, MaxLen: selectorMaxLen, OptIn: true,
				Description: "CSS selector of an iframe: the expression runs in its document, which must be inside the scope."},
		},
		groups: []argGroup{{names: []string{"ref", "frame"}}},
	},
	{
		name:        "scroll",
		impliedTier: "low",
		description: "Scroll the page up or down.",
		args: []Arg{
			{Name: "direction", Type: TypeEnum, Allowed: []string{"up", "down"}, Default: "down", Description: "Direction to scroll."},
			{Name: "amount", Type: TypeInteger, Min: i64(1), Max: i64(10), Default: int64(3), Description: "How far to scroll, in screens."},
		},
	},
	{
		name:        "network_timing",
		impliedTier: "low",
		description: "Get resource timing data for the current page.",
		readOnly:    true,
	},
	{
		name:        "press_key",
		description: "Press a key or chord (\"Enter\", \"Tab\", \"Escape\", \"ArrowDown\", \"Control+A\") in an element (by ref or selector, focused first) or in the focused element. A key that submits a form is judged as submit_form.",
		args: []Arg{
			{Name: "key", Type: TypeString, Required: true, MaxLen: 64, Pattern: keyPattern, Description: "Key name or chord: modifiers (Control, Shift, Alt, Meta) joined by + to a key name or one character."},
			refArg("Element ref from the latest snapshot (optional; not with selector)."),
			selectorArg("CSS selector of the element (optional; not with ref)."),
		},
		groups: []argGroup{{names: []string{"ref", "selector"}}},
	},
	{
		name:        "select_option",
		description: "Choose an option of a <select> (or of an ARIA listbox) by its value or its visible label, firing the page's change events.",
		args: []Arg{
			refArg("Ref of the select or listbox (give ref or selector, not both)."),
			selectorArg("CSS selector of the select or listbox (give ref or selector, not both)."),
			{Name: "value", Type: TypeString, MaxLen: 1024, Description: "The option's value (give value or label, not both)."},
			{Name: "label", Type: TypeString, MaxLen: 1024, Description: "The option's visible text (give value or label, not both)."},
		},
		groups: []argGroup{{names: []string{"ref", "selector"}, exactlyOne: true}, {names: []string{"value", "label"}, exactlyOne: true}},
	},
	{
		name:        "hover",
		description: "Move the mouse over an element (by ref or selector), as a user opening a hover menu would.",
		args: []Arg{
			refArg("Element ref from the latest snapshot (give ref or selector, not both)."),
			selectorArg("CSS selector of the element (give ref or selector, not both)."),
		},
		groups: []argGroup{{names: []string{"ref", "selector"}, exactlyOne: true}},
	},
	{
		name:        "go_forward",
		description: "Navigate forward in the tab's history.",
	},
	{
		name:        "handle_dialog",
		description: "Answer the JavaScript dialog (alert, confirm, prompt, beforeunload) the last call opened: accept or dismiss it, with text for a prompt.",
		args: []Arg{
			{Name: "accept", Type: TypeBoolean, Required: true, Description: "true to accept (OK, or leave the page), false to dismiss (Cancel, or stay)."},
			{Name: "text", Type: TypeString, MaxLen: textMaxLen, Description: "The answer to a prompt dialog (with accept: true)."},
		},
	},
	{
		name: "read",
		description: "Get the page's content as Markdown (headings, lists, code blocks, tables, links), for reading documentation and articles: " +
			"its main content (mode main, the default) or the whole page (mode raw). A long page comes in pages: the reply ends with the call for the next one.",
		args: []Arg{
			{Name: "mode", Type: TypeEnum, Allowed: readModes, Description: "main: the main content, without navigation and sidebars (main_content and article are other names for it); raw: the whole page."},
			{Name: "page", Type: TypeInteger, Min: i64(1), Max: i64(10000), Continuation: true, Description: "Page of the latest read to return (its replies say how many there are)."},
			{Name: "max_chars", Type: TypeInteger, Min: i64(1000), Max: i64(1000000), Description: "Longest reply, in characters (default 200000); a longer page comes in pages."},
		},
		readOnly: true,
	},
	{
		name:        "console_messages",
		description: "Get what the page logged: console calls, uncaught exceptions and the browser's messages, each with a sequence number, oldest first.",
		args: []Arg{
			{Name: "level", Type: TypeEnum, Allowed: []string{"debug", "info", "warning", "error"}, Description: "The least level to return (default: all)."},
			{Name: "since", Type: TypeInteger, Min: i64(0), Max: i64(1 << 40), Continuation: true, Description: "Only messages after this sequence number (from an earlier reply)."},
		},
		readOnly: true,
	},
	{
		name:        "network_log",
		description: "Get the requests the page made: method, URL, type, status, size and time, and the rule of each one the gate refused; each with a sequence number, oldest first.",
		args: []Arg{
			{Name: "since", Type: TypeInteger, Min: i64(0), Max: i64(1 << 40), Continuation: true, Description: "Only requests after this sequence number (from an earlier reply)."},
		},
		readOnly: true,
	},
	{
		name:        "network_requests",
		description: "List the current tab's requests (method, URL, type, status; refused ones with the gate's rule), each with an id for network_request.",
		args: []Arg{
			{Name: "resource_type", Type: TypeString, MaxLen: 20, Pattern: rolePattern, Description: "Only this resource type: document, fetch, xhr, script, image, ..."},
			{Name: "since", Type: TypeInteger, Min: i64(0), Max: i64(1 << 40), Continuation: true, Description: "Only requests after this id's number (from an earlier reply)."},
		},
		readOnly: true,
	},
	{
		name:        "network_request",
		description: "Get one request by its id from network_requests: request and response headers (credentials redacted) and text bodies, capped.",
		args: []Arg{
			{Name: "id", Type: TypeString, Required: true, MaxLen: 12, Pattern: requestIDPattern, Description: "Request id from network_requests (r1, r2, ...)."},
		},
		readOnly: true,
	},
	{
		name:        "upload_file",
		tier:        "high",
		description: "Attach a file from the manifest's upload directory to a file input (by ref or selector). The shipped policies ask a human first.",
		args: []Arg{
			refArg("Ref of the file input (give ref or selector, not both)."),
			selectorArg("CSS selector of the file input (give ref or selector, not both)."),
			{Name: "file", Type: TypeString, MaxLen: 255, Pattern: fileNamePattern, Description: "The file's name inside the upload directory (a path below it, with /)."},
			{Name: "files", Type: TypeList, OptIn: true, MaxItems: uploadMaxFiles, Items: &Arg{Type: TypeString, MaxLen: 255, Pattern: fileNamePattern},
				Description: "Several files' names inside the upload directory, for a multiple file input (give file or files, not both)."},
		},
		groups: []argGroup{{names: []string{"ref", "selector"}, exactlyOne: true}, {names: []string{"file", "files"}, exactlyOne: true}},
	},
	{
		name: "download",
		tier: "medium",
		description: "Download a URL inside the scope, with the session's cookies, into the manifest's download directory (under a safe name, never overwriting). " +
			"Declaring download also lets the pages' own downloads (a download link, a navigation to a file) be saved; without it they are refused.",
		args: []Arg{{
			Name: "url", Type: TypeURL, Required: true, ScopeCheck: true, MaxLen: urlMaxLen,
			Schemes: []string{"http", "https"}, Description: "Absolute URL of the file.",
		}},
		notHere: map[string]string{"dest_path": confinedDownloads, "save_to": confinedDownloads},
	},
	{
		name:        "save_pdf",
		tier:        "medium",
		description: "Save the current page as a PDF in the download directory (a safe name, never overwriting); returns its name, size and SHA-256.",
		args: []Arg{
			{Name: "filename", Type: TypeString, MaxLen: 255, Description: "File name (made safe); default: the page's title."},
			{Name: "landscape", Type: TypeBoolean, Description: "Landscape pages (default portrait)."},
		},
		notHere: map[string]string{"path": confinedDownloads + " (filename names the file)", "dest_path": confinedDownloads + " (filename names the file)"},
	},
	{
		name: "await_human",
		description: "Ask the operator (a human, out of band) a question and wait for the answer: a one-time code, which account to use, " +
			"whether to go on. With secret: true (or when the manifest says so) the answer is kept from you: you get a placeholder such as <ANSWER_1> " +
			"to type with type_text into a field of the page you asked on, as a manifest secret is typed.",
		args: []Arg{
			{Name: "question", Type: TypeString, Required: true, MaxLen: questionMaxLen, Description: "The question, as the operator will read it: say what you need and why."},
			{Name: "secret", Type: TypeBoolean, Description: "true when the answer is a secret (a one-time code, a password): you get a placeholder to type, never the answer."},
			{
				Name: "timeout_seconds", Type: TypeInteger, Min: i64(5), Max: i64(3600),
				Description: "How long to wait for the answer, in seconds (default: the daemon's approval timeout, 55 s unless set); unanswered by then, the call fails and says so.",
			},
		},
	},
	{
		name:        "reload",
		description: "Load the current page again (a page that came from a form is loaded again by its URL, never posted again).",
	},
	{
		name:        "accessibility_audit",
		description: "Audit the page's accessibility (axe-core): the rules it breaks, with their elements.",
		readOnly:    true,
	},
	{
		name:        "performance_trace",
		description: "Record a performance trace of the page and summarise it: LCP, CLS, blocking time, main-thread time, slowest requests.",
		args: []Arg{
			{Name: "duration_ms", Type: TypeInteger, Min: i64(500), Max: i64(10000), Description: "How long to trace, in milliseconds (default 3000)."},
			{Name: "reload", Type: TypeBoolean, OptIn: true, Description: "Reload the page as the trace begins, to measure its load (judged as reload)."},
		},
	},
	{
		name:        "drag",
		description: "Drag an element onto another. A drop into a form is judged as submitting it.",
		args: []Arg{
			{Name: "from", Type: TypeString, Required: true, MaxLen: selectorMaxLen, Pattern: elementPattern, Description: "Element to drag: a ref (e12) or CSS selector."},
			{Name: "to", Type: TypeString, Required: true, MaxLen: selectorMaxLen, Pattern: elementPattern, Description: "Element to drop on: a ref or CSS selector."},
		},
	},
	{
		name:        "fill_form",
		description: "Fill several fields as type_text, select_option and click would; all are checked before any is filled.",
		args: []Arg{{
			Name: "fields", Type: TypeList, Required: true, MaxItems: fillMaxFields,
			Fields: []Arg{
				refArg("Field ref (give ref or selector, not both)."),
				selectorArg("CSS selector (give ref or selector, not both)."),
				{Name: "text", Type: TypeString, MaxLen: textMaxLen, Description: "Text to type."},
				{Name: "value", Type: TypeString, MaxLen: 1024, Description: "Option to choose (value or label)."},
				{Name: "checked", Type: TypeBoolean, Description: "Checkbox or radio state."},
			},
			FieldGroups: []argGroup{{names: []string{"ref", "selector"}, exactlyOne: true}, {names: []string{"text", "value", "checked"}, exactlyOne: true}},
			Description: "Each {ref or selector; exactly one of text, value, checked}.",
		}},
	},
	{
		name:        "emulate",
		tier:        "medium",
		description: "Emulate a device on the session's tabs (resize_page): viewport, device, user agent, locale, timezone, geolocation, network and CPU throttling. Unset fields stay.",
		args: []Arg{
			{Name: "viewport", Type: TypeString, MaxLen: 9, Pattern: viewportPattern, Description: "e.g. 1280x720."},
			{Name: "device", Type: TypeEnum, Allowed: EmulatedDevices, Description: "Device preset."},
			{Name: "user_agent", Type: TypeString, MaxLen: 512, Pattern: userAgentPattern, Description: "User agent."},
			{Name: "locale", Type: TypeString, MaxLen: 35, Pattern: localePattern, Description: "e.g. de-DE."},
			{Name: "timezone", Type: TypeString, MaxLen: 64, Pattern: timezonePattern, Description: "e.g. Europe/Berlin."},
			{Name: "geolocation", Type: TypeString, MaxLen: 32, Pattern: geolocationPattern, Description: "lat,lon (needs a geolocation grant)."},
			{Name: "network", Type: TypeEnum, Allowed: EmulatedNetworks, Description: "Throttling preset."},
			{Name: "cpu", Type: TypeInteger, Min: i64(1), Max: i64(MaxCPUThrottle), Description: "CPU slowdown (1: none)."},
			{Name: "reset", Type: TypeBoolean, Description: "Clear emulation first."},
		},
		groups: []argGroup{{names: []string{"viewport", "device"}}},
		notHere: map[string]string{
			"width": emulateSize, "height": emulateSize,
			"cpuThrottlingRate": "emulate takes the CPU slowdown rate as cpu (1-20)",
			"networkConditions": "emulate takes the network throttling preset as network (none, offline, slow-3g, fast-3g, fast-4g)",
		},
	},
	{
		name:        "save_storage_state",
		tier:        "medium",
		description: "Save the session's signed-in state (cookies, local storage) under a name; values are never shown.",
		args:        []Arg{stateNameArg},
	},
	{
		name:        "load_storage_state",
		tier:        "high",
		description: "Restore signed-in state saved by save_storage_state; refused if any of it is for a site outside the scope.",
		args:        []Arg{stateNameArg},
	},
	{
		name:        "new_context",
		description: "Open an isolated browser context (own cookies, same scope) with a blank tab, and make it current.",
	},
	{
		name:        "switch_context",
		description: "Make a browser context from list_tabs the current one.",
		args:        []Arg{{Name: "context", Type: TypeString, Required: true, MaxLen: 8, Pattern: contextPattern, Description: "Context id from list_tabs (c1, c2, ...)."}},
	},
	{
		name:        "fetch_page",
		engine:      EngineHTTP,
		impliedTier: "low",
		description: "Fetch a web page without a browser (no JavaScript runs) and return it as text: " +
			"text (readable text, headings kept; the default), html (the raw HTML), links (every link, resolved, with its text) or tables (every table as rows of header: cell). " +
			"The URL must be inside the manifest's scope, and so must every redirect.",
		args: []Arg{
			{Name: "url", Type: TypeURL, Required: true, ScopeCheck: true, MaxLen: urlMaxLen,
				Schemes: []string{"http", "https"}, Description: "Absolute URL of the page."},
			{Name: "extract", Type: TypeEnum, Allowed: []string{"text", "html", "links", "tables"}, Default: "text",
				Description: "What to return: text, html, links or tables."},
			{Name: "max_length", Type: TypeInteger, Min: i64(100), Max: i64(fetchMaxLength), Default: int64(5000), Clamp: true,
				Description: fmt.Sprintf("Longest reply, in characters (default 5000, at most %d).", fetchMaxLength)},
			{Name: "start_index", Type: TypeInteger, Min: i64(0), Max: i64(fetchMaxStart), Continuation: true,
				Description: "Where the reply starts, in characters of the page's text (default 0): a page longer than max_length is read on from where the reply says the next part starts."},
		},
		readOnly: true,
	},
	{
		name:        "search_web",
		engine:      EngineHTTP,
		impliedTier: "low",
		description: "Search the web through the manifest's search backend; returns titles, URLs and snippets. The URLs are not fetched: fetch_page checks each against the scope.",
		args: []Arg{
			{Name: "query", Type: TypeString, Required: true, MaxLen: 500, Description: "What to search for."},
			{Name: "num_results", Type: TypeInteger, Min: i64(1), Max: i64(10), Default: int64(5), Clamp: true,
				Description: "How many results (default 5, at most 10)."},
		},
		readOnly: true,
	},
	{
		name:        "download_file",
		engine:      EngineHTTP,
		tier:        "medium",
		description: "Download a URL inside the scope into the manifest's download directory, streamed to disk, under a safe name (never overwriting); returns the name, size, content type and SHA-256.",
		args: []Arg{
			{Name: "url", Type: TypeURL, Required: true, ScopeCheck: true, MaxLen: urlMaxLen,
				Schemes: []string{"http", "https"}, Description: "Absolute URL of the file."},
			{Name: "filename", Type: TypeString, MaxLen: 255, Description: "Name to save the file under (made safe: letters, digits, '.', '_', '-'); default: the server's name for it."},
		},
		notHere: map[string]string{"save_to": confinedDownloads + " (filename names the file)", "dest_path": confinedDownloads + " (filename names the file)"},
	},
}

// EngineHTTP is [browser] engine = "http": the browserless engine, which
// fetches pages over plain HTTP and runs fetch_page, search_web and
// download_file only.
const EngineHTTP = "http"

// fetchMaxLength is the longest reply fetch_page's max_length may ask for
// (GAIA's limit; larger values are clamped to it, as GAIA's design, D14,
// clamps the model's extremes).
const fetchMaxLength = 20000

// fetchMaxStart bounds fetch_page's start_index: far past any page that
// max_response_bytes lets through.
const fetchMaxStart = 1 << 30

// readModes are read's modes: main and raw, and the names wcore-browser
// gives main (main_content, article), which read as main.
var readModes = []string{"main", "raw", "main_content", "article"}

// ReadMode is the mode read runs for a mode argument: main_content and
// article are main by other names, and "" is main.
func ReadMode(mode string) string {
	switch mode {
	case "", "main_content", "article":
		return "main"
	}
	return mode
}

// fillMaxFields bounds fill_form's fields: each is observed and judged
// before any is filled.
const fillMaxFields = 30

// uploadMaxFiles bounds upload_file's files: each is read, hashed and
// copied before the gate decides.
const uploadMaxFiles = 10

// fileNamePattern is the shape of upload_file's file: a relative path of
// plain names (the directory itself is checked when the file is opened).
var fileNamePattern = regexp.MustCompile(`^[^/\x00][^\x00]*$`)

// requestIDPattern is the shape of the request ids network_requests hands out.
var requestIDPattern = regexp.MustCompile(`^r[0-9]{1,10}$`)

// contextPattern is the shape of the browser context ids list_tabs
// hands out.
var contextPattern = regexp.MustCompile(`^c[0-9]{1,3}$`)

// stateNameArg is the name of a saved state: a plain name, no path (the
// file is <name>.json in [browser.files] state_dir).
var stateNameArg = Arg{Name: "name", Type: TypeString, Required: true, MaxLen: 64, Pattern: stateNamePattern,
	Description: "The state's name: letters, digits, '.', '_', '-' (no path)."}

// stateNamePattern is the shape of a state's name.
var stateNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// rolePattern is the shape of an ARIA role name.
var rolePattern = regexp.MustCompile(`^[a-z]+$`)

// keyPattern is the shape of press_key's key: modifiers joined by "+" to a
// key name or one character (which may itself be "+").
var keyPattern = regexp.MustCompile(`^((Control|Ctrl|Shift|Alt|Option|Meta|Command|Cmd)\+)*([A-Za-z][A-Za-z0-9]{0,19}|[^\x00-\x20\x7f]|Space)$`)

// elementPattern is the shape of an element given as a ref or a CSS
// selector (drag's from and to): no control characters.
var elementPattern = regexp.MustCompile(`^[^\x00-\x1f\x7f]+$`)

// IsRef reports whether s is an element ref as snapshot hands them out
// (e12): drag's from and to are refs when they are, else CSS selectors.
func IsRef(s string) bool { return refPattern.MatchString(s) }

// modifiersPattern is the shape of click's modifiers: Alt, Control, Meta
// and Shift (press_key's chord names) joined by "+".
var modifiersPattern = regexp.MustCompile(`^(Alt|Control|Meta|Shift)(\+(Alt|Control|Meta|Shift)){0,3}$`)

// emulateSize is why emulate takes no width or height (Playwright's
// browser_resize, Chrome DevTools MCP's resize_page).
const emulateSize = "emulate takes the size as one argument, viewport = \"<width>x<height>\" (e.g. 1280x720)"

// EmulatedDevices are emulate's device presets (the executor holds their
// metrics and user agents).
var EmulatedDevices = []string{"pixel-7", "iphone-15", "ipad-mini", "desktop"}

// EmulatedNetworks are emulate's network throttling presets (Chrome
// DevTools' figures).
var EmulatedNetworks = []string{"none", "offline", "slow-3g", "fast-3g", "fast-4g"}

// MaxCPUThrottle bounds emulate's cpu: Chrome DevTools' strongest preset.
// At rate r a tab's renderer gets 1/r of a core, and every fact the gate
// reads there (the page state, where a click leads) takes up to r times
// as long; at 20 a page that keeps its thread busy is still observed and
// decided within a call's bound, and whatever is not read in time fails
// the call (the gate refuses what it cannot judge).
const MaxCPUThrottle = 20

// viewportPattern is emulate's viewport: width x height (the executor
// bounds the numbers).
var viewportPattern = regexp.MustCompile(`^[0-9]{2,4}x[0-9]{2,4}$`)

// userAgentPattern is a user agent: printable ASCII only, since it goes
// into a request header (no control character can split it).
var userAgentPattern = regexp.MustCompile(`^[\x20-\x7e]+$`)

// localePattern is the characters of a BCP 47 language tag (the browser
// judges whether it knows the tag; nothing else can reach the
// Accept-Language header).
var localePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// timezonePattern is the characters of an IANA timezone id (the browser
// judges whether it knows it).
var timezonePattern = regexp.MustCompile(`^[A-Za-z0-9_+/-]+$`)

// geolocationPattern is "latitude,longitude" in decimal degrees (the
// executor reads and bounds them).
var geolocationPattern = regexp.MustCompile(`^-?[0-9.]+,-?[0-9.]+$`)

// BuiltinCommands returns the names of the commands a manifest may declare,
// for documentation and error messages.
func BuiltinCommands() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// ImpliedCommands returns the names of the commands a manifest that
// declares no [browser.commands] gets (see Manifest.ImpliedCommands): the
// read-only commands of ToolClad's browser-mode set, in built-in order.
// Commands that change a page's data (click, type_text, submit_form,
// execute_js) are never implied.
func ImpliedCommands() []string {
	var names []string
	for _, b := range builtins {
		if b.impliedTier != "" && b.engine == "" {
			names = append(names, b.name)
		}
	}
	return names
}

// ArgSamples returns, for every built-in command that takes arguments, a
// representative value of each argument, typed as Command.Validate returns
// it (string, int64, bool): what a Cedar request's args record can hold.
// It is for checking that a policy directory's schema fits the requests
// the daemon sends (cedar.RequestShape.Args); the values are not one valid
// call (a command taking ref or selector gets both).
func ArgSamples() map[string]map[string]any {
	out := make(map[string]map[string]any)
	for _, b := range builtins {
		if len(b.args) == 0 {
			continue
		}
		args := make(map[string]any, len(b.args))
		for _, a := range b.args {
			args[a.Name] = a.sample()
		}
		out[b.name] = args
	}
	return out
}

// sample is a value of the argument's type that its checks accept.
func (a *Arg) sample() any {
	switch a.Type {
	case TypeURL:
		return "https://www.example.com/"
	case TypeRef:
		return "e1"
	case TypeSelector:
		return "main"
	case TypeString:
		switch a.Pattern {
		case tabPattern:
			return "t1"
		case modifiersPattern:
			return "Control"
		case requestIDPattern:
			return "r1"
		case viewportPattern:
			return "1280x720"
		case localePattern:
			return "de-DE"
		case geolocationPattern:
			return "52.52,13.405"
		}
		if a.Pattern == contextPattern {
			return "c1"
		}
	case TypeEnum:
		return a.Allowed[0]
	case TypeInteger:
		if a.Default != nil {
			return a.Default
		}
		if a.Min != nil {
			return *a.Min
		}
		return int64(1)
	case TypeBoolean:
		return false
	case TypeList:
		return a.listSample()
	}
	return "text"
}

func lookupBuiltin(name string) *builtinCommand {
	for _, b := range builtins {
		if b.name == name {
			return b
		}
	}
	return nil
}

func (b *builtinCommand) arg(name string) *Arg {
	for i := range b.args {
		if b.args[i].Name == name {
			return &b.args[i]
		}
	}
	return nil
}

func (b *builtinCommand) argNames() []string {
	names := make([]string, len(b.args))
	for i, a := range b.args {
		names[i] = a.Name
	}
	return names
}

// clone copies a built-in argument so that a manifest can narrow it without
// touching the table.
func (a Arg) clone() *Arg {
	c := a
	c.Schemes = slices.Clone(a.Schemes)
	c.Allowed = slices.Clone(a.Allowed)
	c.Sanitize = slices.Clone(a.Sanitize)
	if a.Min != nil {
		c.Min = i64(*a.Min)
	}
	if a.Max != nil {
		c.Max = i64(*a.Max)
	}
	return &c
}

// fullCommand builds the command with the built-in signature a command
// declared without args has: every argument but the opt-in ones, and the
// groups over what is left.
func (b *builtinCommand) fullCommand() *Command {
	c := &Command{Name: b.name, RiskTier: cmp.Or(b.tier, "low"), builtin: b, readOnly: b.readOnly}
	for _, a := range b.args {
		if !a.OptIn {
			c.Args = append(c.Args, a.clone())
		}
	}
	for _, g := range b.groups {
		var present []string
		for _, n := range g.names {
			if c.Arg(n) != nil {
				present = append(present, n)
			}
		}
		switch {
		case g.exactlyOne && len(present) == 1 && len(g.names) > 1 && !slices.ContainsFunc(g.names, func(n string) bool { return c.Arg(n) == nil && !b.arg(n).OptIn }):
			// Only opt-in arguments are missing (upload_file's files):
			// what is left is required, as it was before they existed.
			c.Arg(present[0]).Required = true
		case len(present) >= 2 || (g.exactlyOne && len(present) == 1):
			c.groups = append(c.groups, argGroup{names: present, exactlyOne: g.exactlyOne})
		}
	}
	return c
}

// DefaultMaxContexts is how many browser contexts new_context may open in
// a session besides its first, unless its declaration says max_contexts.
const DefaultMaxContexts = 1

// maxContextsLimit bounds max_contexts: each context is a browser
// context, an egress proxy and a request guard of the session's own.
const maxContextsLimit = 8

// decodeMaxContexts reads new_context's max_contexts.
func decodeMaxContexts(t *table, c *Command) {
	c.MaxContexts = DefaultMaxContexts
	var n int64
	if t.integer("max_contexts", &n) {
		if n < 1 || n > maxContextsLimit {
			t.r.errorf(t.at("max_contexts"), "must be between 1 and %d, got %d", maxContextsLimit, n)
			return
		}
		c.MaxContexts = int(n)
	}
}

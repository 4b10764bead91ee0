package executor

import (
	_ "embed" // the scripts below
	"strings"
)

// The JavaScript browsergate runs in pages lives in js/, one file a script,
// each with its reason at the top. The world's scripts (state, destination,
// hit_test, field, focused, and the quiet-DOM wait's dom_watch, dom_changes
// and dom_quiet) run in the isolated world (world.go), where the page's
// own scripts cannot redefine the built-ins they use.

var (
	//go:embed js/state.js
	stateJS string
	//go:embed js/resolve.js
	resolveJS string
	//go:embed js/destination.js
	destinationSrc string
	//go:embed js/click_check.js
	clickCheckSrc string
	//go:embed js/submit_form.js
	submitFormSrc string
	//go:embed js/key_destination.js
	keyDestinationSrc string
	//go:embed js/option.js
	optionJS string
	//go:embed js/choose_option.js
	chooseOptionJS string
	//go:embed js/check_state.js
	checkStateJS string
	//go:embed js/field.js
	fieldJS string
	//go:embed js/focused.js
	focusedJS string
	//go:embed js/wait_for.js
	waitForJS string
	//go:embed js/network_timing.js
	networkTimingJS string
	//go:embed js/dom_quiet.js
	domQuietSrc string
	//go:embed js/dom_changes.js
	domChangesJS string
	//go:embed js/dom_watch.js
	domWatchSrc string
	//go:embed js/no_webrtc.js
	noWebRTCJS string
	//go:embed js/user_context.js
	userContextJS string
	//go:embed js/no_speculation.js
	noSpeculationJS string
	//go:embed js/no_new_tab.js
	noNewTabEarlyJS string
)

// The scripts that use resolve.js, with it put in place of RESOLVE.
var (
	destinationJS = withResolve(destinationSrc)
	clickCheckJS  = withResolve(clickCheckSrc)
	submitFormJS  = withResolve(submitFormSrc)
	keyDestJS     = withResolve(keyDestinationSrc)
)

// The scripts of the quiet-DOM wait, with dom_changes.js (the watch of
// the document's mutations) put in place of DOM_CHANGES.
var (
	domQuietJS = withDOMChanges(domQuietSrc)
	domWatchJS = withDOMChanges(domWatchSrc)
)

func withDOMChanges(src string) string {
	return strings.ReplaceAll(src, "DOM_CHANGES", "("+strings.TrimSpace(domChangesJS)+")")
}

func withResolve(src string) string {
	return strings.ReplaceAll(src, "RESOLVE", "("+resolveJS+")")
}

// worldName names browsergate's isolated world in DevTools (world.go): the
// world observe reads the page in and the quiet-DOM watch runs in.
const worldName = "browsergate-gate"

package executor

import (
	"context"
	"time"

	"github.com/browsergate/browsergate/gate"
)

// The command table: every command the executor runs, each with what it
// observes, where it leads and how it acts. It is the file to open to add
// a command, which is:
//
//  1. an entry in commandTable below, and its act: a function in a file
//     commands_<what>.go beside this one, given the facts observe read
//     and returning its output (output.go). When the decision needs an
//     element, a field or a tab beyond the page state, observes names it
//     (a gate.Observation, read in observe.go);
//  2. its signature — its arguments, their types and checks — in
//     toolclad's built-in table (toolclad/builtin.go; a browserless
//     engine's command is marked there as the http engine's);
//     TestCommandTableMatchesToolclad keeps the two the same set;
//  3. its name in cedar.BuiltinCommands (cedar/requestjson.go) and its
//     counter session_<command>_count in the shipped Cedar schema
//     (policies/browsergate.cedarschema), which every request carries;
//  4. its tests.
//
// The loop does the rest, the same for every command: observe, decide
// (package gate), enforce, act, record, reply (run.go).

// commandSpec is one command of the executor: what it must observe for
// the decision (which also says where it leads), how it acts, and how long
// the page must be quiet after it. Its signature is toolclad's built-in
// one; TestCommandTableMatchesToolclad keeps the two the same set.
type commandSpec struct {
	// observes names the facts beyond the page state and popups that the
	// decision needs: the element a click or submit acts on and where that
	// leads, the field typing goes into, or the history entry go_back
	// returns to. A scope-checked url argument is judged for every
	// command, so navigate needs nothing more.
	observes gate.Observation
	// changesTab: the command changes which tab the session acts in, or
	// opens or closes one (the gate refuses it while the tab is on a site
	// a secret was typed on).
	changesTab bool
	// act runs the command on the session's tab. The gate has allowed it
	// on the facts observe saw (f); an act that could be steered by a page
	// changing itself since (a click, a submit) checks, right before it
	// acts, that the element still leads where f says.
	act func(ctx context.Context, s *session, args map[string]any, f *facts) (output, error)
	// settle is how long the tab must stay without a network or frame
	// event after the command before it counts as stable; commands that
	// may start a navigation a moment after they return (a click, a
	// submit) need a window long enough to see it begin. noSettle: the
	// command does not change the page, so nothing is waited for.
	settle time.Duration
	// guarded: while the command acts on the page, the acting guard
	// (guard_requests.go) holds the page's navigations and form submissions to
	// what the gate judged. Commands that navigate by themselves
	// (navigate, go_back), run the agent's approved script (execute_js)
	// or only read are not guarded: what a page does during a read is the
	// page's own.
	guarded bool
	// navigates: the command is the agent's own navigation of the tab
	// (it may leave a site a secret was typed on; see secretbind.go).
	navigates bool
	// asksHuman: the command waits for a human's answer (await_human),
	// which does not use up the action's time: it acts in
	// questionContext, bounded by the question's own deadline.
	asksHuman bool
	// pageContent: the output is the page's own text (a snapshot, HTML,
	// a script's value, titles, URLs), fenced in the reply as untrusted
	// data so that it cannot pass for browsergate's own lines.
	pageContent bool
}

// noSettle marks a command that does not change the page.
const noSettle time.Duration = -1

// changesPage reports whether the command acts on the page (and is then
// waited for until the page is quiet, with the downloads it started).
func (c commandSpec) changesPage() bool { return c.settle != noSettle }

// specOf is the command table's entry for a call of name with args: a
// performance_trace that reloads the page (reload: true) navigates, and is
// judged and waited for as reload is.
func specOf(name string, args map[string]any) commandSpec {
	spec := commandTable[name]
	if name == "performance_trace" && args["reload"] == true {
		r := commandTable["reload"]
		spec.settle, spec.navigates, spec.observes = r.settle, r.navigates, r.observes
	}
	return spec
}

// commandTable holds every command the executor runs (adding one: the
// top of this file).
var commandTable = map[string]commandSpec{
	"navigate":         {act: actNavigate, settle: 0, navigates: true}, // the navigation waited for the load event
	"snapshot":         {act: actSnapshot, settle: noSettle, pageContent: true},
	"click":            {observes: gate.ObserveClick, act: actClick, settle: 50 * time.Millisecond, guarded: true},
	"type_text":        {observes: gate.ObserveField, act: actTypeText, settle: 20 * time.Millisecond, guarded: true},
	"submit_form":      {observes: gate.ObserveSubmit, act: actSubmitForm, settle: 50 * time.Millisecond, guarded: true},
	"screenshot":       {act: actScreenshot, settle: noSettle},
	"go_back":          {observes: gate.ObserveHistory, act: actGoBack, settle: 50 * time.Millisecond, navigates: true},
	"wait_for":         {act: actWaitFor, settle: noSettle},
	"extract_html":     {act: actExtractHTML, settle: noSettle, pageContent: true},
	"list_tabs":        {act: actListTabs, settle: noSettle, pageContent: true},
	"switch_tab":       {observes: gate.ObserveTab, act: actSwitchTab, settle: 0, changesTab: true},
	"new_tab":          {act: actNewTab, settle: 0, changesTab: true},
	"close_tab":        {observes: gate.ObserveTab, act: actCloseTab, settle: noSettle, changesTab: true},
	"execute_js":       {observes: gate.ObserveScript, act: actExecuteJS, settle: 50 * time.Millisecond, pageContent: true},
	"scroll":           {act: actScroll, settle: 20 * time.Millisecond, guarded: true},
	"network_timing":   {act: actNetworkTiming, settle: noSettle, pageContent: true},
	"press_key":        {observes: gate.ObserveKey, act: actPressKey, settle: 50 * time.Millisecond, guarded: true},
	"select_option":    {observes: gate.ObserveSelect, act: actSelectOption, settle: 50 * time.Millisecond, guarded: true},
	"hover":            {observes: gate.ObservePoint, act: actHover, settle: 50 * time.Millisecond, guarded: true},
	"go_forward":       {observes: gate.ObserveHistory, act: actGoForward, settle: 50 * time.Millisecond, navigates: true},
	"reload":           {act: actReload, settle: 50 * time.Millisecond, navigates: true},
	"handle_dialog":    {act: actHandleDialog, settle: 50 * time.Millisecond},
	"read":             {act: actRead, settle: noSettle, pageContent: true},
	"console_messages": {act: actConsoleMessages, settle: noSettle, pageContent: true},
	"network_log":      {act: actNetworkLog, settle: noSettle, pageContent: true},
	"network_requests": {act: actNetworkRequests, settle: noSettle, pageContent: true},
	"network_request":  {act: actNetworkRequest, settle: noSettle, pageContent: true},
	"find":             {act: actFind, settle: noSettle, pageContent: true},
	"upload_file":      {observes: gate.ObserveUpload, act: actUploadFile, settle: 50 * time.Millisecond, guarded: true},
	"drag":             {observes: gate.ObserveDrop, act: actDrag, settle: 50 * time.Millisecond, guarded: true},
	"fill_form":        {observes: gate.ObserveFields, act: actFillForm, settle: 20 * time.Millisecond, guarded: true},
	"download":         {act: actDownload, settle: noSettle},
	"save_pdf":         {act: actSavePDF, settle: noSettle},
	"await_human":      {act: actAwaitHuman, settle: noSettle, asksHuman: true},
	// Insight into the page (commands_insight.go).
	"accessibility_audit": {act: actAccessibilityAudit, settle: noSettle, pageContent: true},
	// With reload: true, judged and waited for as reload (specOf).
	"performance_trace": {act: actPerformanceTrace, settle: noSettle, pageContent: true},
	"emulate":           {act: actEmulate, settle: noSettle},
	// The state commands change no page: a load's cookies and local
	// storage are for the pages that load next.
	"save_storage_state": {observes: gate.ObserveStorageState, act: actSaveStorageState, settle: noSettle},
	"load_storage_state": {observes: gate.ObserveStorageState, act: actLoadStorageState, settle: noSettle},
	"new_context":        {act: actNewContext, settle: 0, changesTab: true},
	"switch_context":     {act: actSwitchContext, settle: 0, changesTab: true},
	// The browserless engine's (engine = "http"; webengine.go): they run
	// in runWebTurn, with no tab, so only act and pageContent apply.
	"fetch_page":    {act: actFetchPage, settle: noSettle, pageContent: true},
	"search_web":    {act: actSearchWeb, settle: noSettle, pageContent: true},
	"download_file": {act: actDownloadFile, settle: noSettle},
}

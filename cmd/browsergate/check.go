package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/executor/reload"
	"github.com/browsergate/browsergate/toolclad"
)

// errInvalid marks a check that found problems (already printed).
var errInvalid = errors.New("invalid configuration")

var checkCommand = &command{
	name:     "check",
	synopsis: "--manifest FILE [--manifest FILE...] --policies DIR [--tool-separator .|_] [--matrix]",
	summary: "Validate manifests and policies as serve would load them: print every problem (file:line:col: key: message)\n" +
		"and exit 1, or list the tools of a valid set, warn of its dead ends (file:line:col: warning: key: message: a command\n" +
		"or argument that can never work) and its risky choices, and exit 0. A live manifest in the\n" +
		"user's context has its browser asked whether \"Preload pages\" is off (a hidden blank tab). The policy directory's\n" +
		"policy-tests.json is run. --matrix prints each command's decision with and without a human's approval.",
	setup: checkFlags,
}

// dialogsSay says what each [browser] dialogs choice does.
var dialogsSay = map[string]string{
	toolclad.DialogsAsk:     "a dialog a call opens waits for the agent's handle_dialog",
	toolclad.DialogsDismiss: "dialogs are dismissed at once (beforeunload accepted), and the reply says so",
	toolclad.DialogsAccept:  "dialogs are accepted at once, and the reply says so",
}

func checkFlags(fs *flag.FlagSet) action {
	var manifests multiFlag
	fs.Var(&manifests, "manifest", "ToolClad manifest `FILE` (repeatable)")
	policies := fs.String("policies", "", "Cedar policy `DIR` (with its schema)")
	sep := fs.String("tool-separator", ".", "tool name separator `SEP` used in the summary: \".\" or \"_\", as serve's")
	matrix := fs.Bool("matrix", false, "print, for each declared command, Cedar's decision on a page in the scope without and with a human's approval")
	return func(_ []string, stdout, _ io.Writer) error {
		if len(manifests) == 0 || *policies == "" {
			return fmt.Errorf("%w: check needs --manifest and --policies", errUsage)
		}
		return check(manifests, *policies, *sep, *matrix, serveChoices{}, stdout)
	}
}

// check validates manifests and policies, printing every problem, and
// summarises the tools of a valid set.
func check(manifests []string, policies, sep string, matrix bool, sc serveChoices, stdout io.Writer) error {
	ms, merr := toolclad.LoadFiles(manifests)
	engine, perr := executor.LoadPolicies(policies, ms)
	var terr error
	tests := 0
	if perr == nil {
		tests, terr = reload.RunPolicyTests(engine, policies) // policy changes are tested like code
	}
	problems := 0
	for _, err := range []error{merr, perr, terr} {
		if err == nil {
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if line != "" {
				fmt.Fprintln(stdout, line)
				problems++
			}
		}
	}
	if problems > 0 {
		return fmt.Errorf("%w: %d problem(s)", errInvalid, problems)
	}
	preloading := askPreloading(ms)
	for _, m := range ms {
		if m.Browser.Engine == toolclad.EngineHTTP {
			describeHTTPEngine(stdout, m)
		} else {
			describeBrowser(stdout, m, preloading)
		}
		fmt.Fprintf(stdout, "  %s\n", m.ScopeSummary())
		describeAskExternal(stdout, m)
		if p := permissionsSummary(m); p != "" {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		if m.ImpliedCommands {
			fmt.Fprintf(stdout, "  no [browser.commands]: ToolClad's read-only commands at their documented tiers (mutating commands must be declared)\n")
		}
		for _, c := range m.Commands {
			flags := "risk=" + c.RiskTier
			if c.HumanApproval {
				flags += ", human approval"
			}
			fmt.Fprintf(stdout, "  %-32s %s\n", toolclad.ToolName(m, c, sep), flags)
		}
	}
	fmt.Fprintf(stdout, "%s: %s, checked against %s\n", policies, engine.Tally(), engine.SchemaFile())
	if tests > 0 {
		fmt.Fprintf(stdout, "%s: %d policy test(s) passed\n", filepath.Join(policies, cedar.PolicyTestsFile), tests)
	}
	if matrix {
		printMatrix(stdout, ms, engine, sep)
	}
	deadEnds := deadEndWarnings(ms)
	for _, w := range deadEnds {
		fmt.Fprintln(stdout, w.String())
	}
	var absent []string
	if sc.known { // doctor: is the live browser there?
		var silent []string
		absent, silent = liveEndpointWarnings(ms, sc.root)
		for _, endpoint := range silent {
			delete(preloading, endpoint) // "nothing answers" says it; "could not tell whether preloading is off" adds nothing
		}
	}
	warnings := append(postureWarnings(ms, engine, sc), preloadingWarnings(ms, preloading)...)
	warnings = append(warnings, absent...)
	warnings = append(warnings, askExternalWarnings(ms, engine)...)
	for _, w := range warnings {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	if len(absent) > 0 {
		// A live manifest with no browser at its endpoint is not a risk
		// to weigh but a daemon that refuses every call of that manifest:
		// doctor fails, as check fails on a manifest that does not load.
		fmt.Fprintf(stdout, "not ok (%d warning(s)): no browser answers at a live manifest's live_endpoint, so serve would refuse every call of it\n", len(deadEnds)+len(warnings))
		return errLiveBrowserAbsent
	}
	fmt.Fprintf(stdout, "ok (%d warning(s))\n", len(deadEnds)+len(warnings))
	return nil
}

// errLiveBrowserAbsent is doctor's failure when a live manifest's browser
// does not answer (exit 1).
var errLiveBrowserAbsent = errors.New("doctor: not ok: start the live browser (see the warning above), then run doctor again")

// printMatrix prints each declared command's decision on a page in its
// manifest's scope, without and with a human's approval (Cedar's, and
// the manifest's human_approval).
func printMatrix(w io.Writer, ms []*toolclad.Manifest, engine *cedar.Engine, sep string) {
	fmt.Fprintln(w, "decision matrix (a page in the scope, not signed in; Cedar's decision, then what the call gets):")
	fmt.Fprintf(w, "  %-34s %-9s %-9s %s\n", "command", "alone", "approved", "so")
	for _, m := range ms {
		for _, c := range m.Commands {
			why, alone := matrixDecision(m, c, engine, false)
			_, approved := matrixDecision(m, c, engine, true)
			so := "runs"
			switch {
			case !approved:
				so = "refused: " + why
			case !alone || c.HumanApproval:
				so = "waits for a human's approval"
			}
			fmt.Fprintf(w, "  %-34s %-9s %-9s %s\n", toolclad.ToolName(m, c, sep), allowWord(alone), allowWord(approved), so)
		}
	}
}

func allowWord(b bool) string {
	if b {
		return "allow"
	}
	return "deny"
}

// describeBrowser is check's account of a browser manifest: how it
// reaches its browser, dialogs and downloads.
func describeBrowser(stdout io.Writer, m *toolclad.Manifest, preloading map[string]preloadingAnswer) {
	fmt.Fprintf(stdout, "%s: tool %q, connect=%s, %d command(s), scope allowed=%v blocked=%v allow_external=%v\n",
		m.Path, m.Tool.Name, m.Browser.Connect, len(m.Commands),
		m.Browser.Scope.AllowedDomains, m.Browser.Scope.BlockedDomains, m.Browser.Scope.AllowExternal)
	switch {
	case m.Browser.Connect == "live" && m.Browser.Context == toolclad.ContextUser:
		fmt.Fprintf(stdout, "  context=user: sessions work in the user's own browser context (their cookies and sign-ins); no egress proxy there:\n"+
			"    request interception and WebSocket rules hold the scope; names resolve in the browser (no DNS-rebinding check), and\n"+
			"    speculative TCP connections stop only when the browser's \"Preload pages\" setting is off (context = \"isolated\"\n"+
			"    puts each session behind its own proxy)\n")
		if a := preloading[m.Browser.LiveEndpoint]; a.err == nil && a.off {
			fmt.Fprintf(stdout, "  preloading: off in the browser at %s (\"Preload pages\"): no speculative TCP connections (TestLivePreconnects)\n", m.Browser.LiveEndpoint)
		}
	case m.Browser.Connect == "live":
		fmt.Fprintf(stdout, "  context=isolated: each session in a fresh browser context behind its own egress proxy (not the user's sign-ins)\n")
	case m.Browser.Remote != nil:
		describeRemote(stdout, m.Browser.Remote)
	}
	fmt.Fprintf(stdout, "  dialogs=%s: %s\n", m.Browser.Dialogs, dialogsSay[m.Browser.Dialogs])
	if r := m.Browser.RequestsPerSecondPerHost; r > 0 {
		fmt.Fprintf(stdout, "  requests: paced to %g per second per host; a request whose turn comes after timeout_seconds is refused\n", r)
	}
	if m.Command("download") != nil {
		fmt.Fprintf(stdout, "  downloads: saved in %s, at most %d bytes each\n", m.Browser.Files.DownloadDir, m.Browser.Files.MaxDownloadBytes)
	} else {
		fmt.Fprintln(stdout, "  downloads: refused (download is not declared)")
	}
	if c := m.Command("await_human"); c != nil {
		fmt.Fprintf(stdout, "  await_human: %s\n", secretAnswersSay(c))
	}
}

// secretAnswersSay is check's account of where await_human's secret
// answers may be typed.
func secretAnswersSay(c *toolclad.Command) string {
	kept := "answers are the agent's unless it or the operator asks for a secret one"
	if c.SecretAnswers {
		kept = "every answer is a secret (secret_answers)"
	}
	if len(c.SecretAnswerDomains) == 0 {
		return kept + "; a secret answer is typed only on the host of the page the agent asked on, which the agent chooses (the operator is shown it; secret_answer_domains would fix it)"
	}
	return kept + "; a secret answer may be asked for, and typed, only on pages of " + strings.Join(c.SecretAnswerDomains, ", ") + " (secret_answer_domains)"
}

// describeHTTPEngine is check's account of a browserless manifest: its
// limits, its search backend and its downloads.
func describeHTTPEngine(stdout io.Writer, m *toolclad.Manifest) {
	b := &m.Browser
	fmt.Fprintf(stdout, "%s: tool %q, engine=http (no browser), %d command(s), scope allowed=%v blocked=%v allow_external=%v\n",
		m.Path, m.Tool.Name, len(m.Commands), b.Scope.AllowedDomains, b.Scope.BlockedDomains, b.Scope.AllowExternal)
	rate := "no limit"
	if r := b.HTTP.RequestsPerSecondPerHost; r > 0 {
		rate = fmt.Sprintf("%g request(s) per second per host", r)
	}
	fmt.Fprintf(stdout, "  requests: %s; pages up to %d bytes\n", rate, b.HTTP.MaxResponseBytes)
	if b.Search.Backend != "" {
		fmt.Fprintf(stdout, "  search: %s at %s\n", b.Search.Backend, b.Search.URL)
	}
	if m.Command("download_file") != nil {
		fmt.Fprintf(stdout, "  downloads: saved in %s, at most %d bytes each\n", b.Files.DownloadDir, b.Files.MaxDownloadBytes)
	}
}

// preloadingAnswer is what a live browser said of its "Preload pages"
// setting: off, or the error that kept it from saying.
type preloadingAnswer struct {
	off bool
	err error
}

// askPreloading asks the browser of each live manifest in the user's
// context, once per endpoint, whether its "Preload pages" setting is off.
// An endpoint is always on this machine's loopback (the loader refuses
// any other).
func askPreloading(ms []*toolclad.Manifest) map[string]preloadingAnswer {
	out := map[string]preloadingAnswer{}
	for _, m := range ms {
		b := m.Browser
		if b.Engine == toolclad.EngineHTTP || b.Connect != "live" || b.Context != toolclad.ContextUser {
			continue
		}
		if _, ok := out[b.LiveEndpoint]; !ok {
			off, err := executor.LivePreloadingOff(b.LiveEndpoint, preloadingTimeout)
			out[b.LiveEndpoint] = preloadingAnswer{off: off, err: err}
		}
	}
	return out
}

// preloadingTimeout bounds each question to a live browser.
const preloadingTimeout = 5 * time.Second

// preloadingWarnings warns, for each live manifest in the user's context,
// when its browser has "Preload pages" on or did not say, with what that
// was measured to let through.
func preloadingWarnings(ms []*toolclad.Manifest, preloading map[string]preloadingAnswer) []string {
	var out []string
	const risk = "a session's pages make the browser open TCP connections to hosts outside the scope without any request (%s); " +
		"turn \"Preload pages\" off at chrome://settings/performance (docs/live-mode.md), or use context = \"isolated\""
	for _, m := range ms {
		a, ok := preloading[m.Browser.LiveEndpoint]
		if !ok || m.Browser.Connect != "live" || m.Browser.Context != toolclad.ContextUser || m.Browser.Engine == toolclad.EngineHTTP {
			continue
		}
		switch {
		case a.err != nil:
			out = append(out, fmt.Sprintf("%s: could not tell whether \"Preload pages\" is off in the browser at %s (%v); where it is on, "+risk,
				m.Path, m.Browser.LiveEndpoint, a.err, executor.PreloadingOnFigure))
		case !a.off:
			out = append(out, fmt.Sprintf("%s: \"Preload pages\" is on in the browser at %s: "+risk,
				m.Path, m.Browser.LiveEndpoint, executor.PreloadingOnFigure))
		}
	}
	return out
}

// describeRemote is check's account of [browser.remote]: where browsers
// come from, and what holds their pages to the gate.
func describeRemote(stdout io.Writer, r *toolclad.Remote) {
	where := r.URL
	if r.Provider == toolclad.ProviderCDPURL {
		where = strings.Join(r.Endpoints, ", ")
	}
	each := "each session in a fresh browser context on a pool host"
	switch r.Provider {
	case toolclad.ProviderSelenium:
		each = "each session a browser of its own from the Grid (deleted when the session ends), in a fresh browser context"
	case toolclad.ProviderBrowserless:
		each = "each session a browser of its own launched by browserless (killed when the session ends), in a fresh browser context"
	}
	fmt.Fprintf(stdout, "  remote: provider=%s at %s; %s, whose proxy is the\n"+
		"    daemon's gate (serve --gate-listen) with credentials of the session's own: a request without them is refused\n", r.Provider, where, each)
	pools := make([]string, len(r.PoolCIDRs))
	for i, p := range r.PoolCIDRs {
		pools[i] = p.String()
	}
	fmt.Fprintf(stdout, "  pool networks %s and the daemon's own addresses: refused to every page, whatever the scope grants\n", strings.Join(pools, ", "))
	fmt.Fprintf(stdout, "  the pool host's own traffic (outside the sessions' contexts) is not the gate's: let it reach only the gate (docs/remote.md)\n")
	if r.CredentialsFile != "" {
		fmt.Fprintf(stdout, "  credentials: read from %s when a browser is acquired, never shown\n", r.CredentialsFile)
	}
}

package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/browsergate/browsergate/gate"
)

// emulate changes how the session's own tabs present themselves: their
// viewport and device metrics, touch, user agent, locale, timezone,
// position, network and CPU speed. The settings are the guard's
// (guard_emulation.go): every tab of the session has them, those opened
// later too (new_tab, a popup), given before the tab runs; a user's own
// tab (live mode, adopted with switch_tab) never does, and emulate
// refuses to run there. In the user's context the settings Chromium
// applies to a whole renderer process (gate.ProcessWideEmulation) are refused.
//
// Geolocation is emulated only on a page whose origin
// [browser.permissions] grants geolocation: elsewhere the position would
// be offered to pages that may not read it, and the permission override
// denies them anyway. Throttling cannot stall the gate: the CPU rate is
// bounded (toolclad.MaxCPUThrottle), every fact the gate reads is read
// within the call's bound or the call is refused, and offline or slow
// networks act in the browser's network service, after the guard has
// judged each request.

func actEmulate(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	given := false
	for _, name := range emulateArgs {
		if _, ok := args[name]; ok {
			given = true
		}
	}
	if !given {
		return output{}, fmt.Errorf("emulate: give at least one of %s", strings.Join(emulateArgs, ", "))
	}
	g := s.egress.guard
	cur := string(s.tab.targetID())
	if f.UserTab || g.isUserTab(cur) {
		return output{}, errors.New("emulate: the current tab is the user's own (adopted with switch_tab): emulation applies only to the session's own tabs; switch to one of them or open one with new_tab")
	}
	if s.backend.userContext() {
		// Refused at the gate (gate.Preflight); checked again here.
		for _, name := range gate.ProcessWideEmulation {
			if _, ok := args[name]; ok {
				return output{}, fmt.Errorf("emulate: %s is refused in the user's browser context", name)
			}
		}
	}
	old := g.currentEmulation()
	next, err := old.with(args)
	if err != nil {
		return output{}, err
	}
	if next.geo != nil {
		origin := pageOrigin(f.State.URL)
		if origin == "" || !s.manifest.Browser.Permissions.Granted("geolocation", origin) {
			return output{}, fmt.Errorf("emulate: geolocation refused by rule permissions \"geolocation\": the manifest's browser.permissions does not grant geolocation "+
				"to the current page's origin (%s); a position is emulated only on a page the manifest lets read it", cmpOr(origin, f.State.URL))
		}
	}
	ua := ""
	if next.needsBrowserUA() {
		if ua, err = g.browserUserAgent(ctx); err != nil {
			return output{}, fmt.Errorf("emulate: read the browser's user agent: %w", err)
		}
	}
	if err := g.emulate(ctx, cur, next, s.emulationCalls(next, ua)); err != nil {
		var failed *emulationError
		if errors.As(err, &failed) {
			// The current tab may hold part of the new settings: it
			// gets the old ones back.
			oldUA := ""
			if old.needsBrowserUA() {
				oldUA = ua
				if oldUA == "" {
					oldUA, _ = g.browserUserAgent(ctx)
				}
			}
			if rerr := g.emulate(ctx, cur, old, s.emulationCalls(old, oldUA)); rerr != nil {
				s.backend.logger.Warn("emulate: restoring the tab's emulation after a refusal", "session", s.id, "error", rerr)
			}
			return output{}, failed.explain(next)
		}
		return output{}, fmt.Errorf("emulate: %w", err)
	}
	return output{Text: "emulating on the session's tabs: " + next.String()}, nil
}

// emulationCalls are the commands that give the session's tabs e. In the
// user's context they leave out the settings Chromium applies to a whole
// renderer process (gate.ProcessWideEmulation), even to clear them: the
// session never set them there, and clearing would undo what the user's
// own tools set on a process its tabs may share.
func (s *session) emulationCalls(e emulation, browserUA string) []cdpCall {
	calls := e.calls(browserUA)
	if !s.backend.userContext() {
		return calls
	}
	return slices.DeleteFunc(calls, func(c cdpCall) bool {
		switch c.method {
		case "Emulation.setTimezoneOverride", "Emulation.setLocaleOverride", "Emulation.setCPUThrottlingRate":
			return true
		}
		return false
	})
}

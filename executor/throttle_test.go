package executor

import (
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestIdleThrottleOnlyInLaunchedBrowsers: a session's pages are throttled
// between its calls in a browser browsergate launched, and never in live
// mode (the user's browser, in the user's context or a context of the
// session's own), on the browserless engine, or without a browser.
func TestIdleThrottleOnlyInLaunchedBrowsers(t *testing.T) {
	t.Parallel()
	manifest := func(context string) *toolclad.Manifest {
		m := &toolclad.Manifest{}
		m.Browser.Context = context
		return m
	}
	for _, tc := range []struct {
		name string
		s    *session
		want bool
	}{
		{"launched", &session{backend: &backend{key: backendKey{connect: "launch", manifest: manifest("")}}}, true},
		{"live, the user's context", &session{backend: &backend{key: backendKey{connect: "live", manifest: manifest(toolclad.ContextUser)}}}, false},
		{"live, a context of its own", &session{backend: &backend{key: backendKey{connect: "live", manifest: manifest(toolclad.ContextIsolated)}}}, false},
		{"browserless engine", &session{backend: &backend{key: backendKey{connect: "launch", manifest: manifest("")}}, web: &webSession{}}, false},
		{"no browser", &session{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.throttles(); got != tc.want {
				t.Errorf("throttles() = %v, want %v", got, tc.want)
			}
		})
	}
}

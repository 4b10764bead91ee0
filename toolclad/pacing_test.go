package toolclad_test

import (
	"fmt"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestBrowserPacing: [browser.scope] requests_per_second_per_host is
// valid in a browser manifest, off (0) when absent, and the browserless
// engine keeps its own default of 1; the browser's rate never leaks into
// the browserless engine's field or back.
func TestBrowserPacing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, engine, rate string
		browser, http      float64
	}{
		{name: "browser, absent: off", engine: "cdp", browser: 0, http: 1},
		{name: "browser, set", engine: "cdp", rate: "2.5", browser: 2.5, http: 1},
		{name: "browser, integer", engine: "cdp-direct", rate: "3", browser: 3, http: 1},
		{name: "browser, zero", engine: "cdp", rate: "0", browser: 0, http: 1},
		{name: "http, absent: one per second", engine: "http", browser: 0, http: 1},
		{name: "http, set", engine: "http", rate: "4", browser: 0, http: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rate := ""
			if tc.rate != "" {
				rate = "requests_per_second_per_host = " + tc.rate
			}
			if tc.engine == "http" {
				rate += "\n[browser.search]\nbackend = \"duckduckgo\"" // search_web, declared by default, needs one
			}
			doc := fmt.Sprintf("[tool]\nname = \"w\"\n[browser]\nengine = %q\n[browser.scope]\nallowed_domains = [\"example.com\"]\n%s\n", tc.engine, rate)
			m, err := toolclad.Parse("pacing.toml", []byte(doc))
			if err != nil {
				t.Fatalf("load:\n%v", err)
			}
			if got := m.Browser.RequestsPerSecondPerHost; got != tc.browser {
				t.Errorf("Browser.RequestsPerSecondPerHost = %v, want %v", got, tc.browser)
			}
			if got := m.Browser.HTTP.RequestsPerSecondPerHost; got != tc.http {
				t.Errorf("Browser.HTTP.RequestsPerSecondPerHost = %v, want %v", got, tc.http)
			}
		})
	}
}

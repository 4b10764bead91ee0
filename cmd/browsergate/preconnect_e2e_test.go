package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// preconnectCases are the egress suite's cases in which a Chromium with
// "Preload pages" on opened TCP connections to the canary without any
// request, in the user's context: hints (a link, a Link header), the
// target of a navigation about to start (meta refresh, script, a timer, a
// link, a form, a frame's), and a frame.
var preconnectCases = []string{
	"link preconnect", "Link header preconnect", "meta refresh", "js location", "js location on a timer", "script",
	"link click", "form GET", "form POST", "iframe", "cross-site iframe navigates itself",
}

// TestLivePreconnects: in the user's context no egress proxy stands
// between a session's pages and the network, and Chromium's network
// predictor opens TCP connections to the hosts a page names before any
// request exists, which request interception never sees. A user's
// Chromium started the way the README says (its "Preload pages" setting
// off) must open none: the canary on 127.0.0.2 counts every TCP
// connection, and the run must leave it at zero. check and doctor say the
// protection is in force, and serve does not warn.
//
// The control runs the same cases in a Chromium with the setting at its
// default (on): check, doctor and serve must say so, with the measured
// figure; the connections it makes are logged, and asserted only as a
// total over the cases (one case alone does not always make one).
func TestLivePreconnects(t *testing.T) {
	t.Parallel()
	t.Run("preloading off", func(t *testing.T) {
		port, _ := startUsersChromium(t)
		f := runPreconnectCases(t, port, false)
		if !f.net.Clean() {
			t.Errorf("over the whole run the canary saw %s", f.net)
		}
		for _, sub := range []string{"check", "doctor"} {
			out, code := runBinary(t, sub, "--manifest", f.manifest, "--policies", repoPath("policies"))
			if code != 0 || !strings.Contains(out, "preloading: off in the browser at") || strings.Contains(out, "Preload pages\" is on") {
				t.Errorf("%s does not say preloading is off (exit %d):\n%s", sub, code, out)
			}
		}
		if log := f.stderr.String(); strings.Contains(log, "Preload pages") {
			t.Errorf("serve warned of preloading in a browser that has it off:\n%s", log)
		}
	})
	t.Run("control: preloading on", func(t *testing.T) {
		port, _ := startChromium(t)
		f := runPreconnectCases(t, port, true)
		if len(f.net.Seen()) != 0 || f.net.Upgrades() != 0 {
			t.Errorf("over the whole run the canary saw %s", f.net)
		}
		t.Logf("preloading on: %d TCP connection(s) without a request, in %d of %d case(s): %s",
			len(f.net.Peers()), len(f.tcpCases), len(preconnectCases), strings.Join(f.tcpCases, "; "))
		if len(f.net.Peers()) == 0 {
			t.Errorf("the control saw no connection at all: the cases no longer measure what preloading lets through")
		}
		for _, sub := range []string{"check", "doctor"} {
			out, _ := runBinary(t, sub, "--manifest", f.manifest, "--policies", repoPath("policies"))
			if !strings.Contains(out, "warning: "+f.manifest+": \"Preload pages\" is on in the browser at") || !strings.Contains(out, "TestLivePreconnects") {
				t.Errorf("%s does not warn that preloading is on, with the measured figure:\n%s", sub, out)
			}
		}
		if log := f.stderr.String(); !strings.Contains(log, `\"Preload pages\" is on in the user's browser`) {
			t.Errorf("serve did not warn at attach that preloading is on:\n%s", log)
		}
	})
	t.Run("no browser", func(t *testing.T) {
		// A live endpoint where nothing answers: check cannot tell, and
		// says so with the figure.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		endpoint := "http://" + ln.Addr().String()
		ln.Close()
		manifest := filepath.Join(t.TempDir(), "live.toml")
		if err := os.WriteFile(manifest, []byte(fmt.Sprintf(egressManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint))), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := runBinary(t, "check", "--manifest", manifest, "--policies", repoPath("policies"))
		if code != 0 || !strings.Contains(out, "could not tell whether \"Preload pages\" is off") || !strings.Contains(out, "TestLivePreconnects") {
			t.Errorf("check on a live manifest whose browser is not running (exit %d):\n%s", code, out)
		}
	})
}

// runPreconnectCases runs preconnectCases through the real binary in a
// live session in the user's context of the Chromium on port; measured
// says whether a TCP connection without a request is measured (the
// control) or a failure.
func runPreconnectCases(t *testing.T, port int, measured bool) *egressFixture {
	t.Helper()
	f := startManifest(t, egressManifest, "live", fmt.Sprintf("http://127.0.0.1:%d", port))
	f.tcpMeasured = measured
	f.stillWorks(t) // attaches
	n := 0
	for _, tc := range attackCases() {
		if !slices.Contains(preconnectCases, tc.name) {
			continue
		}
		n++
		t.Run(tc.name, func(t *testing.T) { f.runAttack(t, tc) })
	}
	if n != len(preconnectCases) {
		t.Fatalf("ran %d of the %d preconnect cases: a name is not in attackCases", n, len(preconnectCases))
	}
	f.settle(t, 300)
	return f
}

package main

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// deadEndWarnings are the dead ends of every manifest (toolclad's
// Manifest.Warnings), one "file:line:col: warning: key: message" each:
// what check prints and serve logs at start.
func deadEndWarnings(ms []*toolclad.Manifest) []toolclad.Problem {
	var out []toolclad.Problem
	for _, m := range ms {
		out = append(out, m.Warnings()...)
	}
	return out
}

// liveProbeTimeout bounds doctor's question to each live endpoint.
const liveProbeTimeout = 3 * time.Second

// liveEndpointWarnings is doctor's look at each live manifest's endpoint
// (once per endpoint): a warning where no browser answers, saying how to
// start one, and the endpoints where none does. Without it, doctor would
// call the posture fine and the first session would fail to attach. root
// says doctor runs as root, where Chromium starts only without its
// sandbox.
func liveEndpointWarnings(ms []*toolclad.Manifest, root bool) (out, silent []string) {
	seen := map[string]bool{}
	for _, m := range ms {
		b := m.Browser
		if b.Engine == toolclad.EngineHTTP || b.Connect != "live" || seen[b.LiveEndpoint] {
			continue
		}
		seen[b.LiveEndpoint] = true
		if err := executor.ProbeLiveEndpoint(b.LiveEndpoint, liveProbeTimeout); err != nil {
			silent = append(silent, b.LiveEndpoint)
			out = append(out, fmt.Sprintf("%s: live_endpoint %s: nothing answers there (%v); connect = \"live\" attaches to a Chrome or Chromium "+
				"already running with remote debugging: %s", m.Path, b.LiveEndpoint, err, startLiveBrowser(b.LiveEndpoint, root)))
		}
	}
	return out, silent
}

// startLiveBrowser says how to start a browser that answers at endpoint:
// the command line with the endpoint's own port (a manifest's 9223 is
// not the default 9222), and --no-sandbox when running as root, where
// Chromium refuses to start with its sandbox.
func startLiveBrowser(endpoint string, root bool) string {
	u, err := url.Parse(endpoint)
	if err != nil || !strings.Contains(endpoint, "://") || u.Port() == "" {
		// A path or a URL without a port: no port to give Chromium.
		return "start one with --remote-debugging-port and point live_endpoint at it (see docs/live-mode.md)"
	}
	line := "chromium --remote-debugging-port=" + u.Port()
	note := ""
	if root {
		line += " --no-sandbox"
		note = "; --no-sandbox because Chromium does not start as root with its sandbox: better, run it and browsergate as a user of their own"
	}
	return fmt.Sprintf("start one on a profile of its own with\n"+
		"    %s --user-data-dir=\"$HOME/.config/chrome-agent\"\n"+
		"  (the port of live_endpoint %q%s; see docs/live-mode.md)", line, endpoint, note)
}

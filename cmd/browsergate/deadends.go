package main

import (
	"fmt"
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
// call the posture fine and the first session would fail to attach.
func liveEndpointWarnings(ms []*toolclad.Manifest) (out, silent []string) {
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
				"already running with remote debugging: start one on a profile of its own with\n"+
				"    chromium --remote-debugging-port=9222 --user-data-dir=\"$HOME/.config/chrome-agent\"\n"+
				"  (live_endpoint \"http://127.0.0.1:9222\", the default; see docs/live-mode.md)", m.Path, b.LiveEndpoint, err))
		}
	}
	return out, silent
}

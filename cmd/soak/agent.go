package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tally is what the agents did, counted as they do it.
type tally struct {
	calls, errs, sessions, downloads, pageDownloads, tabs atomic.Int64

	mu    sync.Mutex
	first map[string]int // error text (its first line) -> how many
}

// failed counts an error, keeping its first line to report.
func (t *tally) failed(tool string, msg string) {
	t.errs.Add(1)
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first == nil {
		t.first = map[string]int{}
	}
	t.first[tool+": "+line]++
}

// errorLines are the distinct errors with their counts.
func (t *tally) errorLines() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.first))
	for k, v := range t.first {
		out[k] = v
	}
	return out
}

// agent is one of the soak's MCP clients: its token, and the daemon it
// calls.
type agent struct {
	n            int
	token        string
	endpoint     string
	site         string
	sessionEvery time.Duration
	tally        *tally
}

// bearer adds the agent's token to each request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a new MCP session with the official client.
func (a *agent) connect(ctx context.Context) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("soak-agent-%02d", a.n), Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: a.endpoint,
		HTTPClient: &http.Client{Transport: bearer(a.token)}, MaxRetries: -1}, nil)
	if err == nil {
		a.tally.sessions.Add(1)
	}
	return cs, err
}

// callTimeout bounds one call; the manifest's own timeout is shorter.
const callTimeout = 3 * time.Minute

// call makes one tool call and counts it; ok is false when it failed (a
// transport error, or a reply marked as an error: a refusal or a failed
// action). A transport error is returned, for the session is suspect
// after it; so is the end of the soak (ctx), before the call is made.
//
// A call under way when the soak ends is let finish: cut off, it would
// keep running in the daemon, and the session's DELETE would wait for it
// (the SDK's server drains a session's requests before it closes it),
// beyond what the client waits for a DELETE.
func (a *agent) call(ctx context.Context, cs *mcp.ClientSession, command string, args map[string]any) (string, bool, error) {
	if ctx.Err() != nil {
		return "", false, ctx.Err()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "soak." + command, Arguments: args})
	a.tally.calls.Add(1)
	if err != nil {
		a.tally.failed(command, err.Error())
		return "", false, err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		a.tally.failed(command, text.String())
		return text.String(), false, nil
	}
	return text.String(), true, nil
}

// openedTab finds the tab new_tab's reply names ("opened t2 at …").
var openedTab = regexp.MustCompile(`\bopened (t[0-9]+)\b`)

// run loops over the mixed work until ctx ends, in MCP sessions of
// sessionEvery each (the first one shorter by a share of it, so that the
// agents do not all reconnect at once).
func (a *agent) run(ctx context.Context, agents int) {
	first := a.sessionEvery * time.Duration(a.n+1) / time.Duration(agents)
	for session := 0; ctx.Err() == nil; session++ {
		// A session being opened as the soak ends is opened all the same,
		// and then ended: a client that gave up halfway through its
		// initialize would leave the daemon a session it only forgets
		// after --session-idle, which is no leak of the daemon's.
		cs, err := a.connect(context.WithoutCancel(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.tally.failed("connect", err.Error())
			select { // the daemon refused or failed: do not hammer it
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			continue
		}
		length := a.sessionEvery
		if session == 0 {
			length = first
		}
		a.session(ctx, cs, session, time.Now().Add(length))
		// The client ends its session (DELETE /mcp), as a well-behaved
		// agent does when its task is done.
		if err := cs.Close(); err != nil {
			a.tally.failed("close", err.Error())
		}
	}
}

// session does rounds of work in one MCP session until until, or ctx ends,
// or a call fails in transport.
func (a *agent) session(ctx context.Context, cs *mcp.ClientSession, session int, until time.Time) {
	for round := 0; ctx.Err() == nil && time.Now().Before(until); round++ {
		if err := a.round(ctx, cs, session, round); err != nil {
			return
		}
	}
}

// round is one round of the mixed work: the app page (built, rebuilt by a
// click, read); every second round a tab opened, read and closed; every
// third a download by the agent; every fourth a page that starts a
// download. The first round of a session does all of them. It returns a
// transport error.
func (a *agent) round(ctx context.Context, cs *mcp.ClientSession, session, round int) error {
	name := fmt.Sprintf("a%02d-s%d-r%d", a.n, session, round)
	steps := []struct {
		command string
		args    map[string]any
	}{
		{"navigate", map[string]any{"url": a.site + "/app?n=" + name}},
		{"click", map[string]any{"selector": "#rebuild"}},
		{"snapshot", nil},
	}
	for _, s := range steps {
		if _, _, err := a.call(ctx, cs, s.command, s.args); err != nil {
			return err
		}
	}
	if round%2 == 0 {
		out, ok, err := a.call(ctx, cs, "new_tab", map[string]any{"url": a.site + "/tab?n=" + name})
		if err != nil {
			return err
		}
		if ok {
			a.tally.tabs.Add(1)
			if _, _, err := a.call(ctx, cs, "snapshot", nil); err != nil {
				return err
			}
			if m := openedTab.FindStringSubmatch(out); m != nil {
				if _, _, err := a.call(ctx, cs, "close_tab", map[string]any{"tab": m[1]}); err != nil {
					return err
				}
			} else {
				a.tally.failed("new_tab", "its reply names no tab: "+out)
			}
		}
	}
	if round%3 == 0 {
		_, ok, err := a.call(ctx, cs, "download", map[string]any{"url": a.site + "/file?n=" + name + ".bin"})
		if err != nil {
			return err
		}
		if ok {
			a.tally.downloads.Add(1)
		}
	}
	if round%4 == 0 {
		_, ok, err := a.call(ctx, cs, "navigate", map[string]any{"url": a.site + "/export?n=" + name})
		if err != nil {
			return err
		}
		if ok {
			a.tally.pageDownloads.Add(1)
		}
	}
	return nil
}

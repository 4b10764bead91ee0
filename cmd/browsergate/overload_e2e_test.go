package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPOverloadRefusals: past its limits the daemon refuses new work at
// once, saying which limit, how many are open and what to do, in what the
// official MCP client gives its caller; the sessions already open keep
// working.
//
//   - Sessions: with --max-sessions-per-agent 2 and --max-sessions 3,
//     alice's third session is refused naming her limit, bob's second
//     naming the daemon's; each refusal is logged with the agent.
//   - Calls: with --max-calls-per-session 2, while alice's navigate waits
//     on a page that does not answer, of two more calls of hers at once
//     one waits and the other is refused at once as a tool error naming
//     the limit; bob's session answers meanwhile, and when the page
//     answers, both of alice's calls complete.
func TestHTTPOverloadRefusals(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--max-sessions-per-agent", "2", "--max-sessions", "3", "--max-calls-per-session", "2")
	hit, release := make(chan struct{}, 4), make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/stuck" {
			hit <- struct{}{}
			<-release
		}
		w.Write([]byte(`<title>` + r.URL.Path + `</title><button>ok</button>`))
	}))
	defer site.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	alice, alice2, bob := d.connect(t, "alice-token"), d.connect(t, "alice-token"), d.connect(t, "bob-token")
	if _, err := d.dial("alice-token"); err == nil || !strings.Contains(err.Error(),
		`new MCP session refused: agent "alice" has 2 MCP sessions open, its limit (--max-sessions-per-agent 2): end one`) {
		t.Errorf("alice's third session: %v, want the refusal that names her limit", err)
	}
	if _, err := d.dial("bob-token"); err == nil || !strings.Contains(err.Error(),
		"new MCP session refused: the daemon has 3 MCP sessions open, its limit (--max-sessions 3): try again in 30 seconds") {
		t.Errorf("bob's second session: %v, want the refusal that names the daemon's limit", err)
	}
	log := d.stderr.String()
	if !strings.Contains(log, `"msg":"http: new MCP session refused","agent":"alice"`) || !strings.Contains(log, `"msg":"http: new MCP session refused","agent":"bob"`) {
		t.Errorf("the refusals are not logged with their agents:\n%s", log)
	}
	if out, refused := callText(t, alice2, "e2e.navigate", map[string]any{"url": site.URL + "/two"}); refused {
		t.Errorf("alice's open session after the refusals: %s", out)
	}
	if out, refused := callText(t, bob, "e2e.navigate", map[string]any{"url": site.URL + "/bob"}); refused {
		t.Errorf("bob's open session after the refusals: %s", out)
	}

	// alice's navigate holds her session while the page does not answer.
	type answer struct {
		out     string
		refused bool
	}
	answers := make(chan answer, 3)
	// callText stops the test on a transport error, which a goroutine may
	// not: these calls report it as their answer.
	send := func(tool string, args map[string]any) {
		res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			answers <- answer{tool + ": " + err.Error(), true}
			return
		}
		answers <- answer{resultText(res), res.IsError}
	}
	go send("e2e.navigate", map[string]any{"url": site.URL + "/stuck"})
	<-hit
	for range 2 {
		go send("e2e.snapshot", nil)
	}
	if got := <-answers; !got.refused || !strings.Contains(got.out,
		"refused: this MCP session has 2 tool calls under way, its limit (--max-calls-per-session 2): a session runs its calls one at a time") {
		t.Errorf("the first answer with 2 calls of the session under way: %+v, want the refusal", got)
	}
	if out, refused := callText(t, bob, "e2e.snapshot", nil); refused || !strings.Contains(out, "/bob") {
		t.Errorf("bob's call while alice's session is at its limit: %v %s", refused, out)
	}
	if !strings.Contains(d.stderr.String(), `"msg":"mcp: tool call refused: too many under way in its session"`) {
		t.Errorf("the refused call is not logged:\n%s", d.stderr.String())
	}
	close(release)
	for range 2 {
		if got := <-answers; got.refused {
			t.Errorf("a call of alice's under the limit: %s", got.out)
		}
	}
	if out, refused := callText(t, alice, "e2e.snapshot", nil); refused || !strings.Contains(out, "/stuck") {
		t.Errorf("alice's session after its calls ended: %v %s", refused, out)
	}
}

// TestHTTPCallsWaitTheirTurnPastTheBound: with --calls-at-once 1, while
// alice's navigate holds the one place (its page does not answer), bob's
// call waits its turn and, past --call-wait, is refused as the machine
// saturated, having done nothing: recorded at stage limits and not counted
// as an interaction. bob's next call, sent while the place is still held,
// runs once alice's navigate ends.
func TestHTTPCallsWaitTheirTurnPastTheBound(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--calls-at-once", "1", "--call-wait", "10s")
	hit, release := make(chan struct{}, 1), make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/stuck" {
			hit <- struct{}{}
			<-release
		}
		w.Write([]byte(`<title>` + r.URL.Path + `</title><button>ok</button>`))
	}))
	defer site.Close()
	var released sync.Once
	free := func() { released.Do(func() { close(release) }) }
	defer free()

	alice, bob := d.connect(t, "alice-token"), d.connect(t, "bob-token")
	if out, refused := callText(t, bob, "e2e.navigate", map[string]any{"url": site.URL + "/bob"}); refused {
		t.Fatalf("bob's navigate with the place free: %s", out)
	}
	aliceDone := make(chan string, 1)
	go func() {
		res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "e2e.navigate", Arguments: map[string]any{"url": site.URL + "/stuck"}})
		if err != nil {
			aliceDone <- err.Error()
			return
		}
		aliceDone <- resultText(res)
	}()
	<-hit // alice's navigate holds the place
	out, refused := callText(t, bob, "e2e.snapshot", nil)
	if !refused || !strings.Contains(out, "DENIED at limits: the daemon is running 1 browser calls at once, its bound (serve --calls-at-once), and 0 more were waiting before this one: it waited 10s for its turn and did not run; try again in a moment\nrule: machine saturated") {
		t.Errorf("bob's call while alice's holds the only place: refused=%v %s, want the refusal that says the machine is saturated", refused, out)
	}

	bobDone := make(chan string, 1)
	go func() {
		out, refused := callText(t, bob, "e2e.snapshot", nil)
		if refused {
			out = "refused: " + out
		}
		bobDone <- out
	}()
	time.Sleep(time.Second) // bob's call waits for the place
	free()
	if got := <-bobDone; strings.HasPrefix(got, "refused") || !strings.Contains(got, "/bob") {
		t.Errorf("bob's call sent while the place was held, once it was given back: %s", got)
	}
	if got := <-aliceDone; !strings.Contains(got, "/stuck") {
		t.Errorf("alice's navigate: %s", got)
	}

	alice.Close()
	bob.Close()
	d.stop(t)
	var bobs []string
	for _, r := range readEnvelopes(t, d.evidence) {
		if r.Kind == "" && r.Principal == "bob" {
			bobs = append(bobs, fmt.Sprintf("%s:%s:%s:%d", r.Command, r.Decision.Stage, r.Decision.Rule, r.InteractionCount))
		}
	}
	if got := strings.Join(bobs, " "); got != "navigate:gate::1 snapshot:limits:machine saturated:0 snapshot:gate::2" {
		t.Errorf("bob's evidence (command:stage:rule:interactions): %s", got)
	}
}

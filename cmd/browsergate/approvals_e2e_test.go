package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
)

// heldCall is a tool call running in the background.
type heldCall struct {
	done    chan struct{}
	text    string
	refused bool
}

func (f *fixture) callAsync(t *testing.T, tool string, args map[string]any) *heldCall {
	h := &heldCall{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			h.text, h.refused = err.Error(), true
			return
		}
		h.text, h.refused = resultText(res), res.IsError
	}()
	return h
}

func (h *heldCall) wait(t *testing.T) (string, bool) {
	t.Helper()
	select {
	case <-h.done:
		return h.text, h.refused
	case <-time.After(2 * time.Minute):
		t.Fatal("the held call never returned")
		return "", false
	}
}

// approvals runs `browsergate approvals ARGS --evidence <the fixture's>`.
func (f *fixture) approvals(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"approvals"}, args...), "--evidence", f.evidence)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// pendingID waits until `approvals list` shows a pending call and returns
// its id.
func (f *fixture) pendingID(t *testing.T, h *heldCall) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := f.approvals(t, "list")
		if err != nil {
			t.Fatalf("approvals list: %v\n%s", err, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "apr-") {
				return strings.Fields(line)[0]
			}
		}
		select {
		case <-h.done:
			t.Fatalf("the call returned without being held for approval:\n%s", h.text)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("no call appeared in approvals list within 30s")
	return ""
}

// loggedApprovals ends the MCP session (the daemon exits and lets go of
// the evidence file) and returns the approvals recorded in the log, in the
// order of the calls.
func (f *fixture) loggedApprovals(t *testing.T) []*evidence.Approval {
	t.Helper()
	f.cs.Close()
	store, err := evidence.Open(f.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var out []*evidence.Approval
	for _, s := range sessions {
		envs, err := store.Records(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range envs {
			if e.Decision.Approval != nil {
				out = append(out, e.Decision.Approval)
			}
		}
	}
	return out
}

func launchManifest() string { return fmt.Sprintf(e2eManifest, "launch", "") }

// TestApprovalByOperator: a submit_form on an authenticated page (policy
// submit-authenticated-needs-approval) is held while the tool call waits;
// `browsergate approvals approve` on the daemon's socket releases it, and
// the evidence names who approved, through which channel, and when.
func TestApprovalByOperator(t *testing.T) {
	t.Parallel()
	f := startWith(t, launchManifest())
	f.login(t)
	h := f.callAsync(t, "e2e.submit_form", map[string]any{})
	id := f.pendingID(t, h)
	out, err := f.approvals(t, "list")
	if err != nil || !strings.Contains(out, "submit-authenticated-needs-approval") || !strings.Contains(out, "e2e.submit_form on "+f.siteURL+"/profile") {
		t.Errorf("approvals list does not say what is held and why (%v):\n%s", err, out)
	}
	if out, err := f.approvals(t, "approve", id, "--by", "alice", "--note", "profile change is fine"); err != nil || !strings.Contains(out, "approved by alice (uid ") {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	if refused || !strings.Contains(text, "Profile saved.") && !strings.Contains(text, "dashboard") {
		t.Fatalf("the approved submit did not run:\n%s", text)
	}
	if out, err := f.approvals(t, "approve", id); err == nil || !strings.Contains(out, "no pending approval") {
		t.Errorf("approving twice: %v\n%s", err, out)
	}
	if n := f.site.Submissions.Load(); n != 1 {
		t.Errorf("the site saw %d profile submissions, want 1", n)
	}
	as := f.loggedApprovals(t)
	if len(as) != 1 {
		t.Fatalf("the evidence log has %d approval records, want 1", len(as))
	}
	if a := as[0]; !a.Approved || a.ID != id || a.Channel != "operator" || !strings.HasPrefix(a.By, "alice (uid ") || a.At.IsZero() || a.Note != "profile change is fine" {
		t.Fatalf("evidence approval = %+v", a)
	}
}

// TestApprovalDeniedAndTimedOut: a denial and no answer both refuse the
// held call, at stage approval, and nothing is submitted.
func TestApprovalDeniedAndTimedOut(t *testing.T) {
	t.Parallel()
	f := startWith(t, launchManifest(), "--approval-timeout", "2s")
	f.login(t)

	h := f.callAsync(t, "e2e.submit_form", map[string]any{})
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "deny", id, "--by", "bob", "--note", "not today"); err != nil {
		t.Fatalf("approvals deny: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	if !refused || !strings.Contains(text, "DENIED at approval") || !strings.Contains(text, "denied via operator by bob") || !strings.Contains(text, "not today") {
		t.Fatalf("denied call:\n%s", text)
	}

	text, refused = f.call(t, "e2e.submit_form", map[string]any{})
	if !refused || !strings.Contains(text, "DENIED at approval") || !strings.Contains(text, "nobody approved") {
		t.Fatalf("unanswered call:\n%s", text)
	}
	if n := f.site.Submissions.Load(); n != 0 {
		t.Errorf("the profile form was submitted %d time(s) although no approval was given", n)
	}
	as := f.loggedApprovals(t)
	if len(as) != 2 || as[0].Approved || as[0].Channel != "operator" || as[0].By != "bob (uid 0)" && !strings.HasPrefix(as[0].By, "bob (uid ") || as[1].Approved || as[1].Channel != "timeout" {
		for _, a := range as {
			t.Logf("approval %+v", a)
		}
		t.Fatal("the evidence log does not record the denial and the timeout")
	}
}

// TestApprovalByElicitation: a client that supports elicitation is asked;
// its user's accept releases the call, and the progress notifications told
// the client it was waiting.
func TestApprovalByElicitation(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	var progress []string
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved_by": "carol"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	}
	f := startClient(t, launchManifest(), opts)
	f.login(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "e2e.submit_form", Arguments: map[string]any{}}
	params.SetProgressToken("approve-me")
	res, err := f.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("the elicited submit was refused:\n%s", resultText(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "submit-authenticated-needs-approval") || !strings.Contains(asked[0], "e2e.submit_form on "+f.siteURL) {
		t.Errorf("elicitation messages: %q", asked)
	}
	if len(progress) == 0 || !strings.Contains(progress[0], "waiting for a human to approve apr-") {
		t.Errorf("progress notifications: %q", progress)
	}
	mu.Unlock()
	as := f.loggedApprovals(t)
	mu.Lock()
	if len(as) != 1 || !as[0].Approved || as[0].Channel != "elicitation" || as[0].By != "carol" {
		t.Fatalf("evidence approvals = %+v", as)
	}
}

// TestAgentCannotApprove: nothing the agent can call approves. No tool is
// about approvals; human_approved cannot be passed as an argument; and
// the operator socket is not a URL a page or navigate can reach.
func TestAgentCannotApprove(t *testing.T) {
	t.Parallel()
	f := startWith(t, launchManifest(), "--approval-timeout", "3s")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Name, "approv") || strings.Contains(tool.Description, "approv") {
			t.Errorf("tool %s offers approval: %s", tool.Name, tool.Description)
		}
	}
	f.login(t)
	f.mustRefuse(t, "e2e.submit_form", map[string]any{"human_approved": true}, "DENIED at args")
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": "http://unix:" + f.evidence + ".approvals.sock/v1/approvals"}, "DENIED")
	// A call that claims to come back from an elicitation, with an answer
	// and a state this daemon never issued, is refused.
	forged := &mcp.CallToolParams{Name: "e2e.submit_form", Arguments: map[string]any{},
		RequestState:   "apr-000000000000.Zm9yZ2Vk",
		InputResponses: mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved_by": "the agent"}}}}
	res, err := f.cs.CallTool(ctx, forged)
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !res.IsError || !strings.Contains(text, "DENIED at approval") || !strings.Contains(text, "request state") {
		t.Fatalf("forged approval answer:\n%s", text)
	}
	// The held call is only released by a human: with the agent doing all
	// it can, it times out.
	text, refused := f.call(t, "e2e.submit_form", map[string]any{})
	if !refused || !strings.Contains(text, "nobody approved") {
		t.Fatalf("held call:\n%s", text)
	}
}

// TestApprovalElicitationDismissed: a user who dismisses the elicitation
// form leaves the call held; the operator's answer then decides it. With
// --elicitation=false the client is never asked.
func TestApprovalElicitationDismissed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		asked int
	}{
		{"dismissed", nil, 1},
		{"elicitation off", []string{"--elicitation=false"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			asked := 0
			opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked++
				mu.Unlock()
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}}
			f := startClient(t, launchManifest(), opts, tc.args...)
			f.login(t)
			h := f.callAsync(t, "e2e.submit_form", map[string]any{})
			id := f.pendingID(t, h)
			if out, err := f.approvals(t, "approve", id, "--by", "dave"); err != nil {
				t.Fatalf("approvals approve: %v\n%s", err, out)
			}
			if text, refused := h.wait(t); refused {
				t.Fatalf("the approved call was refused:\n%s", text)
			}
			mu.Lock()
			n := asked
			mu.Unlock()
			if n != tc.asked {
				t.Errorf("the client was asked %d time(s), want %d", n, tc.asked)
			}
			if as := f.loggedApprovals(t); len(as) != 1 || !as[0].Approved || as[0].Channel != "operator" {
				t.Fatalf("evidence approvals = %+v", as)
			}
		})
	}
}

// TestManifestHumanApproval: a command the manifest marks human_approval is
// held even though every policy allows it, and runs once approved.
func TestManifestHumanApproval(t *testing.T) {
	t.Parallel()
	f := startWith(t, reloadManifest+"[browser.commands.scroll]\nhuman_approval = true\n")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"})
	h := f.callAsync(t, "e2e.scroll", map[string]any{"direction": "down"})
	id := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); !strings.Contains(out, "the manifest marks scroll human_approval") {
		t.Errorf("approvals list does not say why scroll is held:\n%s", out)
	}
	if out, err := f.approvals(t, "approve", id); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); refused {
		t.Fatalf("the approved scroll was refused:\n%s", text)
	}
	if as := f.loggedApprovals(t); len(as) != 1 || !as[0].Approved {
		t.Fatalf("evidence approvals = %+v", as)
	}
}

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/operator"
)

// TestApprovalsCLI drives `approvals list|approve|deny` in-process against
// an operator socket.
func TestApprovalsCLI(t *testing.T) {
	t.Parallel()
	socket := filepath.Join(t.TempDir(), "a.sock")
	broker := approval.NewBroker(nil)
	srv, err := operator.Listen(operator.Config{Socket: socket, Broker: broker})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hold := func() *approval.Pending {
		return broker.Open(approval.Request{Session: "s1", Tool: "t.submit_form", Args: map[string]any{"selector": "form"},
			Page: "https://a.example/", Why: []string{"policy p"}}, time.Minute)
	}
	cli := func(args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		code := run(append(args, "--socket", socket), &stdout, &stderr)
		return stdout.String() + stderr.String(), code
	}
	for _, verb := range []string{"approve", "deny"} {
		p := hold()
		out, code := cli("approvals", "list")
		if code != 0 || !strings.Contains(out, p.ID) || !strings.Contains(out, p.Deadline.UTC().Format(time.RFC3339)) {
			t.Fatalf("approvals list: exit %d\n%s", code, out)
		}
		out, code = cli("approvals", verb, p.ID, "--by", "alice")
		done := map[string]string{"approve": "approved", "deny": "denied"}[verb]
		if code != 0 || !strings.HasPrefix(out, p.ID+": "+done+" by alice (uid ") {
			t.Fatalf("approvals %s: exit %d\n%s", verb, code, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if o := p.Wait(ctx); o.Approved != (verb == "approve") {
			t.Errorf("approvals %s: the held call got %+v", verb, o)
		}
		cancel()
	}
	if out, code := cli("approvals", "deny", "apr-000000000000"); code != 1 || !strings.Contains(out, "no pending approval") {
		t.Errorf("deny of an unknown id: exit %d\n%s", code, out)
	}
	if out, code := cli("approvals", "approve"); code != 2 || !strings.Contains(out, "needs the id") {
		t.Errorf("approve without an id: exit %d\n%s", code, out)
	}
	if out, code := cli("approvals", "list"); code != 0 || !strings.Contains(out, "no calls are waiting") {
		t.Errorf("approvals list with nothing held: exit %d\n%s", code, out)
	}
}

// TestPendingShowsTheDeadlineInFull: a deadline is a date and time with
// its zone, not a bare 3:04PM.
func TestPendingShowsTheDeadlineInFull(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 18, 2, 5, 0, time.FixedZone("CET", 3600))
	var b bytes.Buffer
	printPending(&b, []approval.Request{{ID: "apr-1", Session: "s", Tool: "t.x", Page: "p", Deadline: now.Add(2 * time.Minute), Why: []string{"w"}}}, now)
	if want := "apr-1  (2m0s left, until 2026-11-23T17:04:05Z)  session s\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("printPending:\n%s\nwant it to start with\n%s", b.String(), want)
	}
}

// TestPendingShowsHiddenCharactersEscaped: approvals list shows the page,
// where the call leads and its arguments as `evidence show` does: a bidi
// override, ESC and a C1 CSI are escapes, never raw on the terminal.
func TestPendingShowsHiddenCharactersEscaped(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 18, 2, 5, 0, time.UTC)
	var b bytes.Buffer
	printPending(&b, []approval.Request{{ID: "apr-1", Session: "s", Tool: "t.x", Deadline: now.Add(time.Minute),
		Page: "https://a.example/\x1b[2J", URL: "https://a.example/\u202Eexe.txt", Args: map[string]any{"text": "\u009b31m"}, Why: []string{"w"}}}, now)
	out := b.String()
	for _, want := range []string{`page:   "https://a.example/\u001B[2J"`, `leads:  "https://a.example/\u202Eexe.txt"`, `{"text":"\u009B31m"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals list lacks %s:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\u202e\u009b") {
		t.Errorf("approvals list shows hidden characters raw: %q", out)
	}
}

// TestPendingShowsACallWithoutArgumentsAsAnEmptyObject: a held call with
// no arguments is listed as "{}", as the console shows it, not "null".
func TestPendingShowsACallWithoutArgumentsAsAnEmptyObject(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 18, 2, 5, 0, time.UTC)
	var b bytes.Buffer
	printPending(&b, []approval.Request{{ID: "apr-1", Session: "s", Tool: "site_submit_form", Page: "p", Deadline: now.Add(time.Minute), Why: []string{"w"}}}, now)
	if want := "  call:   site_submit_form {}\n"; !strings.Contains(b.String(), want) {
		t.Errorf("approvals list:\n%s\nwant the line %q", b.String(), want)
	}
}

package operator_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/operator"
)

// channel is a daemon's operator channel over a real Unix socket in a
// temporary directory, with a broker to hold calls and a client to answer.
type channel struct {
	broker *approval.Broker
	server *operator.Server
	client *operator.Client
	socket string
}

func newChannel(t *testing.T) *channel { return newChannelWith(t, nil) }

// newChannelWith is newChannel for a daemon that serves its evidence file
// with backup (nil: it does not).
func newChannelWith(t *testing.T, backup func(io.Writer) (int64, error)) *channel {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "a.sock")
	broker := approval.NewBroker(nil)
	srv, err := operator.Listen(operator.Config{Socket: socket, Broker: broker, Evidence: backup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := operator.NewClient(socket)
	if err != nil {
		t.Fatal(err)
	}
	return &channel{broker: broker, server: srv, client: c, socket: socket}
}

func (ch *channel) hold(tool string) *approval.Pending {
	return ch.broker.Open(approval.Request{Session: "s1", Tool: tool, Command: "submit_form",
		Args: map[string]any{"selector": "form"}, Page: "https://a.example/", Why: []string{"policy p"}}, time.Minute)
}

func TestListShowsPendingCallsOldestFirst(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	ctx := context.Background()
	if got, err := ch.client.List(ctx); err != nil || len(got) != 0 {
		t.Fatalf("List with nothing held: %v, %v", got, err)
	}
	first := ch.hold("t.submit_form")
	time.Sleep(2 * time.Millisecond) // distinct creation times
	second := ch.hold("t.execute_js")
	got, err := ch.client.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID {
		t.Fatalf("List = %+v, want %s then %s", got, first.ID, second.ID)
	}
	if got[0].Tool != "t.submit_form" || got[0].Page != "https://a.example/" || got[0].Args["selector"] != "form" || got[0].Deadline.IsZero() {
		t.Errorf("the listed call lacks what a human must see: %+v", got[0])
	}
}

func TestApproveAndDeny(t *testing.T) {
	t.Parallel()
	for _, approve := range []bool{true, false} {
		ch := newChannel(t)
		p := ch.hold("t.submit_form")
		ans, err := ch.client.Decide(context.Background(), p.ID, operator.Decision{Approve: approve, By: "alice", Note: "looked at it"})
		if err != nil {
			t.Fatalf("Decide(approve=%v): %v", approve, err)
		}
		if ans.ID != p.ID || ans.Approved != approve || !strings.HasPrefix(ans.By, "alice (uid ") {
			t.Errorf("answer = %+v", ans)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		o := p.Wait(ctx)
		cancel()
		if o.Approved != approve || o.Channel != approval.ChannelOperator || o.By != ans.By || o.Note != "looked at it" {
			t.Errorf("the held call got %+v, want approved=%v via operator by %q", o, approve, ans.By)
		}
		// The first answer wins: a second one finds nothing pending.
		if _, err := ch.client.Decide(context.Background(), p.ID, operator.Decision{Approve: !approve}); !errors.Is(err, operator.ErrNotPending) {
			t.Errorf("a second answer: %v, want ErrNotPending", err)
		}
	}
}

func TestUnknownIDIsNotPending(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	_, err := ch.client.Decide(context.Background(), "apr-000000000000", operator.Decision{Approve: true})
	if !errors.Is(err, operator.ErrNotPending) || !strings.Contains(err.Error(), `no pending approval "apr-000000000000"`) {
		t.Fatalf("Decide on an unknown id: %v", err)
	}
}

func TestWrongTokenIsRefused(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	p := ch.hold("t.submit_form")
	// A client that read some other token: the daemon keeps its own.
	if err := os.WriteFile(operator.TokenPath(ch.socket), []byte("not-the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := operator.NewClient(ch.socket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(context.Background()); !errors.Is(err, operator.ErrUnauthorized) {
		t.Errorf("List with a wrong token: %v, want ErrUnauthorized", err)
	}
	if _, err := c.Decide(context.Background(), p.ID, operator.Decision{Approve: true}); !errors.Is(err, operator.ErrUnauthorized) {
		t.Errorf("Decide with a wrong token: %v, want ErrUnauthorized", err)
	}
	if p.Answered() {
		t.Error("a request with a wrong token answered the held call")
	}
	// No token at all.
	res, err := rawRequest(t, ch.socket, "", http.MethodGet, "/v1/approvals", "")
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without a token: %v %v", res.Status, err)
	}
}

func TestBadBodyIsRefused(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	p := ch.hold("t.submit_form")
	tok, err := os.ReadFile(operator.TokenPath(ch.socket))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		``,
		`{`,
		`{"by": "alice"}`,                     // no approve
		`{"approve": "yes"}`,                  // not a boolean
		`{"approve": true, "approver": "me"}`, // unknown field
	} {
		res, err := rawRequest(t, ch.socket, strings.TrimSpace(string(tok)), http.MethodPost, "/v1/approvals/"+p.ID, body)
		if err != nil || res.StatusCode != http.StatusBadRequest {
			t.Errorf("body %q: %v %v, want 400", body, res.Status, err)
		}
	}
	if p.Answered() {
		t.Error("a bad body answered the held call")
	}
}

func TestSocketAndTokenArePrivate(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	for _, path := range []string{ch.socket, operator.TokenPath(ch.socket)} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %o, want 600", path, perm)
		}
	}
	if err := ch.server.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{ch.socket, operator.TokenPath(ch.socket)} {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind after Close: %v", path, err)
		}
	}
}

func TestSecondDaemonOnTheSameSocket(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	_, err := operator.Listen(operator.Config{Socket: ch.socket, Broker: approval.NewBroker(nil)})
	if !errors.Is(err, operator.ErrInUse) {
		t.Fatalf("a second Listen on a live socket: %v, want ErrInUse", err)
	}
	// The first daemon still answers.
	if _, err := ch.client.List(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	t.Parallel()
	socket := filepath.Join(t.TempDir(), "a.sock")
	if err := os.WriteFile(socket, nil, 0o600); err != nil { // left by a daemon that died
		t.Fatal(err)
	}
	srv, err := operator.Listen(operator.Config{Socket: socket, Broker: approval.NewBroker(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := operator.NewClient(socket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestClientWithoutADaemon(t *testing.T) {
	t.Parallel()
	if _, err := operator.NewClient(filepath.Join(t.TempDir(), "none.sock")); err == nil || !strings.Contains(err.Error(), "is browsergate serve running") {
		t.Fatalf("NewClient without a daemon: %v", err)
	}
}

// rawRequest sends one HTTP request over the socket, bypassing Client.
func rawRequest(t *testing.T, socket, token, method, path, body string) (*http.Response, error) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	req, err := http.NewRequest(method, "http://browsergate"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := hc.Do(req)
	if err != nil {
		return &http.Response{}, err
	}
	res.Body.Close()
	return res, nil
}

// TestEvidenceCopy: a daemon that serves its evidence file hands the
// client what its backup writes, to the token's holder only; one that
// does not says so.
func TestEvidenceCopy(t *testing.T) {
	t.Parallel()
	live := newChannelWith(t, func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, "a consistent copy")
		return int64(n), err
	})
	c, socket := live.client, live.socket
	var b strings.Builder
	if n, err := c.Evidence(context.Background(), &b); err != nil || n != 17 || b.String() != "a consistent copy" {
		t.Errorf("Evidence = %d %q %v", n, b.String(), err)
	}
	if res, err := rawRequest(t, socket, "", http.MethodGet, "/v1/evidence", ""); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the copy without a token: %v %v", res.Status, err)
	}
	ch := newChannel(t)
	if _, err := ch.client.Evidence(context.Background(), io.Discard); err == nil || !strings.Contains(err.Error(), "does not serve its evidence") {
		t.Errorf("a daemon without evidence: %v", err)
	}
}

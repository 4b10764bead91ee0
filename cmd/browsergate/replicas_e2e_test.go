package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
)

// haproxyBinary is Debian's HAProxy (2.6), which .ci/install-deps lab
// installs.
const haproxyBinary = "/usr/sbin/haproxy"

// haproxyExample is the shipped configuration the fleet tests run, and the
// addresses it is written with: the front, then replica r1's and r2's.
const haproxyExample = "examples/haproxy/browsergate.cfg"

var haproxyExampleAddrs = [3]string{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"}

// fleet is two replicas of `browsergate serve --http` (r1 and r2, each with
// its own launched Chromium and evidence file) behind HAProxy running the
// shipped example configuration.
type balancedFleet struct {
	front    string // http://127.0.0.1:PORT, HAProxy's
	replicas map[string]*httpDaemon
	addrs    map[string]string // replica -> its listening address
	haproxy  *exec.Cmd
	hlog     *syncBuffer
	// start starts replica id again on its address (after a kill).
	start func(t testing.TB, id string) *httpDaemon
}

// freeAddr is a loopback address with a port nobody listened on a moment
// ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startFleet starts r1 and r2 on inputManifest, then HAProxy in front of
// them with examples/haproxy/browsergate.cfg, its three addresses
// replaced by the test's.
func startFleet(t testing.TB, args ...string) *balancedFleet {
	t.Helper()
	if _, err := os.Stat(haproxyBinary); err != nil {
		t.Fatalf("HAProxy is not installed (%v): bash .ci/install-deps lab installs Debian's", err)
	}
	front := freeAddr(t)
	f := &balancedFleet{front: "http://" + front, replicas: map[string]*httpDaemon{}, addrs: map[string]string{}}
	f.start = func(t testing.TB, id string) *httpDaemon {
		addr := f.addrs[id]
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		// A later --http wins over startHTTP's own 127.0.0.1:0.
		d := startHTTP(t, inputManifest(), "", append([]string{"--replica", id, "--http", addr, "--http-host", front}, args...)...)
		f.addrs[id] = strings.TrimPrefix(d.url, "http://")
		f.replicas[id] = d
		return d
	}
	f.start(t, "r1")
	f.start(t, "r2")
	cfg, err := os.ReadFile(repoPath(haproxyExample))
	if err != nil {
		t.Fatal(err)
	}
	text := string(cfg)
	for i, addr := range []string{front, f.addrs["r1"], f.addrs["r2"]} {
		if !strings.Contains(text, haproxyExampleAddrs[i]) {
			t.Fatalf("%s no longer names %s", haproxyExample, haproxyExampleAddrs[i])
		}
		text = strings.ReplaceAll(text, haproxyExampleAddrs[i], addr)
	}
	path := filepath.Join(t.TempDir(), "browsergate.cfg")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f.hlog = &syncBuffer{}
	f.haproxy = exec.Command(haproxyBinary, "-db", "-f", path)
	f.haproxy.Stdout, f.haproxy.Stderr = f.hlog, f.hlog
	startUntilCleanup(t, f.haproxy, "haproxy's log", f.hlog)
	// HAProxy takes both replicas for up from its start (they listen
	// before it does): it is ready once it answers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(f.front + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy does not answer at %s: %v\n%s", f.front, err, f.hlog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return f
}

// dial opens an MCP session through HAProxy with the official client, as
// an agent's client would: its default retries, its event stream.
func (f *balancedFleet) dial(token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-fleet", Version: "test"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: f.front + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token: token}},
	}, nil)
}

// sessionOn opens a session through HAProxy that lands on replica id
// (waiting for HAProxy to take a restarted replica back), as alice. The
// sessions that land elsewhere are held open meanwhile: each holds a
// connection there, so that HAProxy's leastconn sends the next one to
// the replica with fewer.
func (f *balancedFleet) sessionOn(t testing.TB, id string) *fleetSession {
	t.Helper()
	var elsewhere []*mcp.ClientSession
	defer func() {
		for _, cs := range elsewhere {
			cs.Close()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cs, err := f.dial("alice-token")
		if err == nil && replicaOf(cs.ID()) == id {
			t.Cleanup(func() { cs.Close() })
			return &fleetSession{cs: cs, id: cs.ID(), agent: "alice"}
		}
		if err == nil {
			elsewhere = append(elsewhere, cs)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session through HAProxy landed on %s (last: %v)\n%s", id, err, f.hlog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicaOf is the replica named by a session id's start ("" if none).
func replicaOf(sessionID string) string {
	id, _, ok := strings.Cut(sessionID, "-")
	if !ok {
		return ""
	}
	return id
}

// fleetSite is the small site the fleet's sessions browse: a page with a
// link, and the page it leads to.
func fleetSite(t testing.TB) string {
	t.Helper()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/q" {
			fmt.Fprint(w, `<title>q</title><p>the next page</p>`)
			return
		}
		fmt.Fprint(w, `<title>p</title><p>a page</p><a id=next href="/q">next</a>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site
}

// fleetSession is one agent's MCP session through HAProxy and the calls
// it made that were answered.
type fleetSession struct {
	cs    *mcp.ClientSession
	id    string
	agent string
	// acked are the commands answered, in order; navigates name the
	// session's id and the call's number in their URL (s=, n=), which is
	// how its replica's evidence is tied to the MCP session.
	acked []string
}

// next makes the session's next call (navigate, snapshot, click in
// turn), and notes it when it is answered. A refusal is an error too.
func (s *fleetSession) next(site string) error {
	n := len(s.acked)
	tool, args := "e2e.navigate", map[string]any{"url": fmt.Sprintf("%s/p?s=%s&n=%d", site, s.id, n)}
	switch n % 3 {
	case 1:
		tool, args = "e2e.snapshot", nil
	case 2:
		tool, args = "e2e.click", map[string]any{"selector": "#next"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s refused: %s", tool, firstLine(resultText(res)))
	}
	s.acked = append(s.acked, strings.TrimPrefix(tool, "e2e."))
	return nil
}

// evidenceBySession reads an evidence file (read-only: the replica is
// stopped or dead) and returns, by the MCP session id its navigates name,
// the commands of the calls recorded, in order. An evidence session whose
// navigates name no MCP session id, or two, is an error.
func evidenceBySession(t *testing.T, path string) map[string][]string {
	t.Helper()
	store, err := evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("open %s read-only: %v", path, err)
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range sessions {
		recs, err := store.Records(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var mcpID string
		var commands []string
		for _, r := range recs {
			if r.Kind != "" {
				continue // the session's end
			}
			commands = append(commands, r.Command)
			if r.Command != "navigate" {
				continue
			}
			u, err := url.Parse(fmt.Sprint(r.Args["url"]))
			if err != nil {
				t.Fatalf("%s: session %s: navigate to %v", path, s.ID, r.Args["url"])
			}
			if id := u.Query().Get("s"); mcpID == "" {
				mcpID = id
			} else if id != mcpID {
				t.Errorf("%s: evidence session %s holds the calls of MCP sessions %s and %s", path, s.ID, mcpID, id)
			}
		}
		if mcpID == "" {
			t.Errorf("%s: evidence session %s names no MCP session (%v)", path, s.ID, commands)
			continue
		}
		if _, dup := out[mcpID]; dup {
			t.Errorf("%s: two evidence sessions for MCP session %s", path, mcpID)
		}
		out[mcpID] = commands
	}
	return out
}

// checkReplicaEvidence: the evidence file of replica holds exactly the
// sessions whose ids carry its name, and for each every call answered,
// in order; after a kill (killed), at most one call more (recorded before
// its reply, which was lost), else none.
func checkReplicaEvidence(t *testing.T, path, replica string, sessions []*fleetSession, killed bool) {
	t.Helper()
	got := evidenceBySession(t, path)
	want := 0
	for _, s := range sessions {
		if replicaOf(s.id) != replica {
			if _, ok := got[s.id]; ok {
				t.Errorf("%s's evidence holds session %s", replica, s.id)
			}
			continue
		}
		want++
		recorded, ok := got[s.id]
		switch {
		case !ok:
			t.Errorf("%s's evidence lacks session %s (%d calls answered)", replica, s.id, len(s.acked))
		case len(recorded) < len(s.acked) || !slices.Equal(recorded[:len(s.acked)], s.acked):
			t.Errorf("session %s: %s recorded %v, the client was answered %v", s.id, replica, recorded, s.acked)
		case !killed && len(recorded) != len(s.acked), killed && len(recorded) > len(s.acked)+1:
			t.Errorf("session %s: %s recorded %d calls, the client was answered %d", s.id, replica, len(recorded), len(s.acked))
		}
	}
	if len(got) != want {
		t.Errorf("%s's evidence holds %d MCP sessions, want %d", replica, len(got), want)
	}
}

// TestReplicasBehindHAProxy: two replicas, each with its own Chromium and
// evidence file, behind HAProxy running examples/haproxy/browsergate.cfg.
// 16 sessions of two agents open through HAProxy are spread over both
// replicas (their ids say which; 8 and 8 in every run here, at least 6
// each asked), and each makes 20 calls (navigate, snapshot and
// click on a local site) without an error. Then, while every session
// keeps calling, replica r1 is killed (SIGKILL): r2's sessions go on
// without an error; each of r1's clients gets an error on its call, opens
// a new session through HAProxy, which lands on r2 and works. Every call
// a replica answered is in its evidence file (r1's opened after the
// kill), in its session's order, and each file holds exactly the sessions
// whose ids carry its replica's name.
func TestReplicasBehindHAProxy(t *testing.T) {
	t.Parallel()
	f := startFleet(t, "--max-sessions-per-agent", "16")
	site := fleetSite(t)
	var sessions []*fleetSession
	on := map[string][]*fleetSession{}
	for i := range 16 {
		agent := []string{"alice", "bob"}[i%2]
		cs, err := f.dial(agent + "-token")
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		t.Cleanup(func() { cs.Close() })
		s := &fleetSession{cs: cs, id: cs.ID(), agent: agent}
		sessions = append(sessions, s)
		on[replicaOf(s.id)] = append(on[replicaOf(s.id)], s)
	}
	// leastconn spreads them: each open session holds a connection to its
	// replica (its event stream). It gave 8 and 8 in every run here; the
	// exact split depends on when each client's stream is up, so the test
	// asks only that neither replica is left with few (taking turns, the
	// SDK client's discover probe went to r1 and every session to r2).
	t.Logf("sessions by replica: r1 %d, r2 %d", len(on["r1"]), len(on["r2"]))
	if len(on["r1"]) < 6 || len(on["r2"]) < 6 || len(on["r1"])+len(on["r2"]) != 16 {
		t.Fatalf("sessions by replica: r1 %d, r2 %d, other %d; want 16 spread over both", len(on["r1"]), len(on["r2"]), 16-len(on["r1"])-len(on["r2"]))
	}

	// 20 calls each, all sessions at once.
	start := time.Now()
	var wg sync.WaitGroup
	var failed sync.Map
	for _, s := range sessions {
		wg.Go(func() {
			for range 20 {
				if err := s.next(site); err != nil {
					failed.Store(s.id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("16 sessions × 20 calls through HAProxy: %v", time.Since(start).Round(time.Millisecond))
	failed.Range(func(id, err any) bool {
		t.Errorf("session %s: %v", id, err)
		return true
	})
	if t.Failed() {
		t.FailNow()
	}

	// Every session keeps calling; once each of r1's has been answered
	// twice more, r1 is killed.
	var killedAt time.Time
	killed := make(chan struct{})
	answered := make(chan struct{}, len(on["r1"]))
	type r1Outcome struct {
		cut, next error         // the call the kill cut, and the one after it
		again     *fleetSession // the session it opened anew
		ready     time.Duration // kill -> the new session's first call answered
	}
	outcomes := make([]r1Outcome, len(on["r1"]))
	var r1wg, r2wg sync.WaitGroup
	for i, s := range on["r1"] {
		r1wg.Go(func() {
			o := &outcomes[i]
			signalled := false
			for n := 1; ; n++ {
				err := s.next(site)
				failedAt := time.Now()
				if err == nil {
					if n == 2 {
						answered <- struct{}{}
						signalled = true
					}
					continue
				}
				if !signalled {
					answered <- struct{}{} // r1 is killed all the same; this session failed
				}
				<-killed
				if failedAt.Before(killedAt) {
					o.cut = fmt.Errorf("before r1 was killed: %w", err)
					return
				}
				o.cut, o.next = err, s.next(site)
				break
			}
			cs, err := f.dial(s.agent + "-token")
			if err != nil {
				o.again = &fleetSession{id: fmt.Sprintf("(none: %v)", err)}
				return
			}
			t.Cleanup(func() { cs.Close() })
			o.again = &fleetSession{cs: cs, id: cs.ID(), agent: s.agent}
			for range 3 {
				if err := o.again.next(site); err != nil {
					o.again.id += fmt.Sprintf(" (failed: %v)", err)
					return
				}
				if len(o.again.acked) == 1 {
					o.ready = time.Since(killedAt)
				}
			}
		})
	}
	// r2's sessions call all along, and go on until each has been
	// answered 3 calls begun after r1's death.
	r2Errs := make([]error, len(on["r2"]))
	r2After := make([]int, len(on["r2"]))
	for i, s := range on["r2"] {
		r2wg.Go(func() {
			for r2After[i] < 3 {
				after := false
				select {
				case <-killed:
					after = true
				default:
				}
				if err := s.next(site); err != nil {
					r2Errs[i] = err
					return
				}
				if after {
					r2After[i]++
				}
			}
		})
	}
	for range on["r1"] {
		<-answered
	}
	r1 := f.replicas["r1"]
	killedAt = time.Now()
	if err := r1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	close(killed)
	_ = r1.cmd.Wait()
	r1wg.Wait()
	r2wg.Wait()

	var notFound, closed, badGateway int
	for i, o := range outcomes {
		s := on["r1"][i]
		again := "none"
		if o.again != nil {
			again = o.again.id
		}
		t.Logf("r1's session %s: the call r1's death cut: %v; its next call: %v; a new session: %s, its first call answered %v after the kill",
			s.id, o.cut, o.next, again, o.ready.Round(time.Millisecond))
		// The next call is refused as a session no replica holds: r2
		// answers it 404 (the SDK's ErrSessionMissing), or the client's
		// event stream was answered so first and the client closed the
		// session (ErrConnectionClosed, saying session not found); or,
		// sent while r1 was still dying, HAProxy answers 502 or drops
		// the connection (EOF), as for the call r1's death cut.
		switch {
		case errors.Is(o.next, mcp.ErrSessionMissing):
			notFound++
		case errors.Is(o.next, mcp.ErrConnectionClosed) && strings.Contains(o.next.Error(), "session not found"):
			closed++
		case o.next != nil && (strings.Contains(o.next.Error(), http.StatusText(http.StatusBadGateway)) || errors.Is(o.next, io.EOF) || strings.HasSuffix(o.next.Error(), ": EOF")):
			badGateway++
		default:
			t.Errorf("r1's session %s: its next call after r1's death: %v; want session not found (or, while r1 was dying, Bad Gateway or EOF)", s.id, o.next)
		}
		if o.cut == nil {
			t.Errorf("r1's session %s: the call under way as r1 died did not fail", s.id)
		}
		if o.again != nil && o.again.cs != nil {
			sessions = append(sessions, o.again)
		}
		if o.again == nil || o.again.cs == nil || replicaOf(o.again.id) != "r2" || len(o.again.acked) != 3 {
			t.Errorf("r1's session %s: the new session through HAProxy: %+v; want one on r2 with 3 calls answered", s.id, o.again)
		}
	}
	t.Logf("the next call of r1's sessions after its death: %d session not found, %d connection closed (session not found), %d Bad Gateway or EOF (r1 still dying)",
		notFound, closed, badGateway)
	for i, err := range r2Errs {
		if err != nil {
			t.Errorf("r2's session %s, as r1 died: %v", on["r2"][i].id, err)
		}
	}
	// r2 said why it answered r1's sessions 404.
	if log := f.replicas["r2"].stderr.String(); !strings.Contains(log, `"msg":"http: a request for a session of another replica`) ||
		!strings.Contains(log, `"session_replica":"r1"`) {
		t.Errorf("r2 did not log the requests for r1's sessions:\n%s", log)
	}
	if out, err := exec.Command(binary, "evidence", "verify", "--evidence", r1.evidence).CombinedOutput(); err != nil {
		t.Errorf("evidence verify of the killed r1's file: %v\n%s", err, out)
	}
	checkReplicaEvidence(t, r1.evidence, "r1", sessions, true)
	// The clients end their sessions while r2 is there to take the
	// DELETE (after it, with no replica up, HAProxy waits a second before
	// each refusal).
	for _, s := range sessions {
		wg.Go(func() { s.cs.Close() })
	}
	wg.Wait()
	f.replicas["r2"].stop(t)
	checkReplicaEvidence(t, f.replicas["r2"].evidence, "r2", sessions, false)
}

// TestReplicaSessions: serve --replica r1 hands out session ids r1-<26
// base32 characters>; each is kept to the agent that opened it on every
// request (the SDK compares the bearer token's agent with the one that
// opened the session: bob's token with alice's id is refused, 403, on
// POST, GET and DELETE, and alice's session goes on); an id of another
// replica is answered 404, session not found, as any unknown id, and
// logged; /healthz, /metrics and every log line name the replica. A bad
// replica id is a usage error, and so is --replica without --http.
func TestReplicaSessions(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--replica", "r1", "--operator-token-file", operatorFile(t))
	shape := regexp.MustCompile(`^r1-[A-Z2-7]{26}$`)
	alice := d.connect(t, "alice-token")
	other := d.connect(t, "alice-token")
	for _, id := range []string{alice.ID(), other.ID()} {
		if !shape.MatchString(id) {
			t.Errorf("session id %q, want r1-<26 base32 characters>", id)
		}
	}
	if alice.ID() == other.ID() {
		t.Errorf("two sessions with id %s", alice.ID())
	}
	site, _ := serveLogged(t, map[string]string{"/p": `<title>p</title><p>hello</p>`})
	if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/p"}); refused {
		t.Fatalf("navigate: %s", out)
	}

	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"e2e.snapshot","arguments":{}}}`
	with := func(token, session string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25",
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	}
	for _, method := range []string{"POST", "GET", "DELETE"} {
		body := ""
		if method == "POST" {
			body = call
		}
		h := with("bob-token", alice.ID())
		if method == "GET" {
			h["Accept"] = "text/event-stream"
		}
		if code, _, out := d.raw(t, method, "/mcp", h, body); code != http.StatusForbidden || strings.TrimSpace(out) != "session user mismatch" {
			t.Errorf("%s with bob's token and alice's session: %d %q, want 403 session user mismatch", method, code, out)
		}
	}
	if out, refused := callText(t, alice, "e2e.snapshot", nil); refused || !strings.Contains(out, "hello") {
		t.Errorf("alice's session after bob's tries: %v %s", refused, out)
	}

	// An id of another replica (r2's: the load balancer sent it here) is
	// as unknown as any: 404, which the SDK's client reports as
	// mcp.ErrSessionMissing ("session not found").
	foreign := "r2-" + strings.Repeat("A", 26)
	if code, _, out := d.raw(t, "POST", "/mcp", with("alice-token", foreign), call); code != http.StatusNotFound || strings.TrimSpace(out) != "session not found" {
		t.Errorf("a session of r2: %d %q, want 404 session not found", code, out)
	}

	if code, _, out := d.raw(t, "GET", "/healthz", nil, ""); code != http.StatusOK || out != "ok replica r1\n" {
		t.Errorf("/healthz: %d %q, want ok replica r1", code, out)
	}
	if code, _, out := d.raw(t, "GET", "/metrics", map[string]string{"Authorization": "Bearer " + olga}, ""); code != http.StatusOK ||
		!strings.Contains(out, "\nbrowsergate_replica_info{replica=\"r1\"} 1\n") {
		t.Errorf("/metrics: %d, want browsergate_replica_info{replica=\"r1\"} 1:\n%s", code, out)
	}
	log := d.stderr.String()
	if !strings.Contains(log, `"msg":"http: a request for a session of another replica`) || !strings.Contains(log, `"session_replica":"r2","agent":"alice"`) {
		t.Errorf("the request for r2's session was not logged:\n%s", log)
	}
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "{") && !strings.Contains(line, `"replica":"r1"`) {
			t.Errorf("a log line without the replica: %s", line)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:0", "--agents", "agents.toml", "--replica", "R1"}, `--replica "R1": a replica id is a lower-case letter`},
		{[]string{"--http", "127.0.0.1:0", "--agents", "agents.toml", "--replica", "r-1"}, `--replica "r-1": a replica id is`},
		{[]string{"--http", "127.0.0.1:0", "--agents", "agents.toml", "--replica", "replicanamedlong1"}, `--replica "replicanamedlong1": a replica id is`},
		{[]string{"--replica", "r1"}, "--replica and --stateless-clients go with --http"},
		{[]string{"--stateless-clients"}, "--replica and --stateless-clients go with --http"},
	} {
		out, code := runBinary(t, append([]string{"serve", "--manifest", "m.toml", "--policies", "p", "--evidence", "e.db"}, c.args...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("serve %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, out)
		}
	}
}

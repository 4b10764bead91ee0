package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFleetSessionLimitsAcrossTwoReplicas: two daemons (each with its own
// Chromium) on one store, --max-sessions 3 --max-sessions-per-agent 2.
// Sessions opened on both at once never pass the limits fleet-wide, and a
// refusal names the limit and says it is the fleet's; a session closed
// on one replica frees its place on the other at once; a replica killed
// (-9) frees its places once its leases expire (--session-lease 6s; each
// replica renews every 2 s, so a close not dropped at once would show); and
// with the store down a new session is refused, saying why.
func TestFleetSessionLimitsAcrossTwoReplicas(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	args := []string{"--store", store.url, "--max-sessions", "3", "--max-sessions-per-agent", "2", "--session-lease", "6s"}
	replicas := []*httpDaemon{
		launchHTTP(t, nil, store.env, inputManifest(), "", args...),
		launchHTTP(t, nil, store.env, inputManifest(), "", args...),
	}
	type opened struct {
		cs      *mcp.ClientSession
		agent   string
		replica int
	}
	var mu sync.Mutex
	var open []opened
	var refusals []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			agent, r := []string{"alice", "bob"}[i%2], (i/2)%2
			<-start
			cs, err := replicas[r].dial(agent + "-token")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refusals = append(refusals, err.Error())
				return
			}
			t.Cleanup(func() { cs.Close() })
			open = append(open, opened{cs, agent, r})
		})
	}
	close(start)
	wg.Wait()
	perAgent := map[string]int{}
	for _, o := range open {
		perAgent[o.agent]++
	}
	if len(open) != 3 || perAgent["alice"] > 2 || perAgent["bob"] > 2 {
		t.Fatalf("8 sessions opened at once on two replicas: %d open (%v), want 3, at most 2 an agent; refusals:\n%s", len(open), perAgent, strings.Join(refusals, "\n"))
	}
	for _, r := range refusals {
		fleetTotal := strings.Contains(r, "the fleet (every replica sharing the store) has 3 MCP sessions open, its limit (--max-sessions 3)")
		fleetAgent := strings.Contains(r, "MCP sessions open across the fleet (every replica sharing the store), its limit (--max-sessions-per-agent 2)")
		if !fleetTotal && !fleetAgent {
			t.Errorf("a refusal that names neither of the fleet's limits: %s", r)
		}
	}
	if got := store.pg.SQL(t, "fleet", "SELECT count(*) FROM fleet_sessions WHERE session IS NOT NULL"); got != "3" {
		t.Errorf("the store holds %s leases with a session, want 3", got)
	}

	// Closed on one replica, its place is free on the other at once.
	closed := open[0]
	if err := closed.cs.Close(); err != nil {
		t.Fatal(err)
	}
	other := 1 - closed.replica
	cs, err := replicas[other].dial(closed.agent + "-token")
	if err != nil {
		t.Fatalf("a session closed on replica %d did not free its place on replica %d: %v", closed.replica+1, other+1, err)
	}
	t.Cleanup(func() { cs.Close() })
	open = append(open[1:], opened{cs, closed.agent, other})

	// Killed, a replica's places come free once its leases expire.
	on := [2]int{}
	for _, o := range open {
		on[o.replica]++
	}
	dead := 0
	if on[1] > on[0] {
		dead = 1
	}
	live := replicas[1-dead]
	if err := replicas[dead].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = replicas[dead].cmd.Wait()
	deadline := time.Now().Add(time.Minute)
	for {
		cs, err := live.dial("alice-token")
		if err == nil {
			t.Cleanup(func() { cs.Close() })
			break
		}
		if !strings.Contains(err.Error(), "fleet") {
			t.Fatalf("a session refused after a replica was killed, not by the fleet's limits: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after replica %d was killed with %d sessions (leases of 6 s), its places are still taken: %v", dead+1, on[dead], err)
		}
		time.Sleep(300 * time.Millisecond)
	}

	// The store down: refused, never allowed.
	store.pg.Stop()
	if _, err := live.dial("bob-token"); err == nil || !strings.Contains(err.Error(), "the fleet's count of open MCP sessions") || !strings.Contains(err.Error(), "could not be read") {
		t.Fatalf("a session opened with the store down: %v", err)
	}
}

// TestWebEnginePacingAcrossTheFleet: two daemons (browserless) on one
// store, at one request per 1000 s to a host: the first daemon's fetch
// goes; the second daemon's is refused at once, waiting for its turn,
// since the fleet's schedule gave the host's turn to the first; the site
// saw one request. With the store down, a fetch is refused with the
// reason, and the site sees nothing more.
func TestWebEnginePacingAcrossTheFleet(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site := serveWebSite(t)
	daemon := func() *fixture {
		manifest := fmt.Sprintf(webManifest, 0.001, t.TempDir(), site.URL)
		return startClientEnv(t, manifest, nil, store.env, "--store", store.url)
	}
	r1, r2 := daemon(), daemon()
	r1.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/counted"})
	r2.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/counted"}, "waiting for its turn", "fleet's schedule")
	if n := len(site.times("/counted")); n != 1 {
		t.Errorf("the site saw %d requests from two replicas at one per 1000 s, want 1", n)
	}
	store.pg.Stop()
	r2.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/other"}, "waiting for its turn", "the fleet's store did not answer")
	if n := len(site.times("/other")); n != 0 {
		t.Errorf("the site saw %d requests with the store down, want 0", n)
	}
}

// TestBrowserPacingAcrossTheFleet: two daemons, each launching its own
// Chromium, on one store, with [browser.scope] requests_per_second_per_host
// at one per 1000 s: the first daemon's navigation takes the host's turn
// on the fleet's schedule; the second daemon's navigation to the host is
// refused by the request guard (rule requests_per_second_per_host; its
// log line names the fleet's schedule), and the server saw the first page
// alone.
func TestBrowserPacingAcrossTheFleet(t *testing.T) {
	t.Parallel()
	store := startCentralStore(t)
	site := &arrivals{}
	url, stop, err := serveOn("127.0.0.1:0", site)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	manifest := fmt.Sprintf(pacedManifest, "requests_per_second_per_host = 0.001")
	r1 := startClientEnv(t, manifest, nil, store.env, "--store", store.url)
	r2 := startClientEnv(t, manifest, nil, store.env, "--store", store.url)
	r1.mustAllow(t, "paced.navigate", map[string]any{"url": url + "/page"})
	text, refused := r2.call(t, "paced.navigate", map[string]any{"url": url + "/page?other-replica"})
	if !refused || !strings.Contains(text, "requests_per_second_per_host") {
		t.Errorf("the other replica's navigation to a host whose turn the first took was not refused by requests_per_second_per_host:\n%s", text)
	}
	if log := r2.stderr.String(); !strings.Contains(log, "its turn on the fleet's schedule comes after the request's deadline") {
		t.Errorf("the other replica's refusal does not say the fleet's schedule refused it:\n%s", log)
	}
	if paths, _ := site.seen(); !slices.Equal(paths, []string{"/page"}) {
		t.Errorf("the server saw %v, want the first replica's /page alone", paths)
	}
}

package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// memLeases is a fleet's leases in memory, shared by the fronts of a
// test (package fleet keeps them in PostgreSQL); down makes every call
// fail, as a store that does not answer.
type memLeases struct {
	mu    sync.Mutex
	agent map[string]string // lease -> agent
	n     int
	down  bool
	// every is LeaseFor (0: an hour, so that no renewal runs).
	every time.Duration
}

var errDown = errors.New("store down")

func (m *memLeases) Reserve(_ context.Context, agent string, most, perAgent int, ended []string) (string, int, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return "", 0, 0, errDown
	}
	for _, l := range ended {
		delete(m.agent, l)
	}
	total, mine := len(m.agent), 0
	for _, a := range m.agent {
		if a == agent {
			mine++
		}
	}
	if total >= most || mine >= perAgent {
		return "", total, mine, nil
	}
	m.n++
	l := fmt.Sprint("lease-", m.n)
	m.agent[l] = agent
	return l, total, mine, nil
}

func (m *memLeases) Bind(context.Context, string, string) error { return nil }

func (m *memLeases) Note(context.Context, string, string) error { return nil }

func (m *memLeases) Renew(_ context.Context, live map[string]string, ended []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range ended {
		delete(m.agent, l)
	}
	for l, a := range live {
		m.agent[l] = a
	}
	return nil
}

func (m *memLeases) Drop(_ context.Context, leases []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range leases {
		delete(m.agent, l)
	}
	return nil
}

// Sweep has nothing to sweep: these leases never expire.
func (m *memLeases) Sweep(context.Context) (int, error) { return 0, nil }

func (m *memLeases) LeaseFor() time.Duration {
	if m.every == 0 {
		return time.Hour
	}
	return m.every
}

// TestFrontsCountTheFleetsSessions: two fronts on one fleet's leases hold
// the limits together, and say it is the fleet's; a session closed on one
// frees its place on the other before the client hears of the close; a
// store that does not answer refuses the session. Renewals every 10 ms
// (leases of 30 ms) change none of it.
func TestFrontsCountTheFleetsSessions(t *testing.T) {
	for _, every := range []time.Duration{0, 30 * time.Millisecond} {
		t.Run(fmt.Sprint("lease ", every), func(t *testing.T) { frontsCountTheFleet(t, every) })
	}
}

func frontsCountTheFleet(t *testing.T, every time.Duration) {
	leases := &memLeases{agent: map[string]string{}, every: every}
	cfg := Config{Agents: agentsOf(t, "a", "b"), MaxSessionsPerAgent: 2, MaxSessions: 3, Leases: leases}
	f1, f2 := serve(t, cfg), serve(t, cfg)
	a1, err := open(f1, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(f2, "a-token"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(f1, "a-token"); err == nil || !strings.Contains(err.Error(), `agent "a" has 2 MCP sessions open across the fleet (every replica sharing the store), its limit (--max-sessions-per-agent 2)`) {
		t.Errorf("a's third session, on either front: %v, want the fleet's per-agent refusal", err)
	}
	if _, err := open(f2, "b-token"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(f1, "b-token"); err == nil || !strings.Contains(err.Error(), "the fleet (every replica sharing the store) has 3 MCP sessions open, its limit (--max-sessions 3)") {
		t.Errorf("a fourth session: %v, want the fleet's total refusal", err)
	}
	if err := a1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := open(f2, "b-token"); err != nil {
		t.Errorf("a session on the other front once one closed: %v", err)
	}
	leases.mu.Lock()
	leases.down = true
	leases.mu.Unlock()
	if _, err := open(f1, "b-token"); err == nil || !strings.Contains(err.Error(), "could not be read, and no session is opened while it is unknown") {
		t.Errorf("a session with the store down: %v, want a refusal", err)
	}
}

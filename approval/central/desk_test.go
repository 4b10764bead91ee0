package central_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/central"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pglab.StopShared()
	os.Exit(code)
}

// replica is one replica's broker and desk, running.
type replica struct {
	broker *approval.Broker
	desk   *central.Desk
	hub    *events.Hub
	stop   func() // stops its desk, as a replica that dies
}

func newReplica(t *testing.T, pool *pgxpool.Pool, name string, key string) *replica {
	t.Helper()
	r := &replica{broker: approval.NewBroker(nil), hub: events.NewHub(0)}
	d, err := central.New(context.Background(), pool, name, []byte(key), r.broker, r.hub, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.desk = d
	r.broker.SetFleet(d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	r.stop = func() { cancel(); <-done }
	t.Cleanup(r.stop)
	return r
}

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pg, db := pglab.Shared(t)
	pool, err := pgxpool.New(context.Background(), pg.URLWithPassword(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// held waits until r lists the call id.
func held(t *testing.T, r *replica, id string) approval.Request {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, q := range r.broker.List() {
			if q.ID == id {
				return q
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("call %s never listed", id)
	return approval.Request{}
}

// unlisted waits until r no longer lists the call id (what: which call).
func unlisted(t *testing.T, r *replica, id, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for slices.ContainsFunc(r.broker.List(), func(q approval.Request) bool { return q.ID == id }) {
		if time.Now().After(deadline) {
			t.Fatal("still listed: " + what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestACallHeldOnOneReplicaIsAnsweredOnAnother: a call r1 holds is listed
// on r2 (naming r1) and in r2's events; approved on r2, r1's call goes
// ahead with the answer, which names who gave it and where.
func TestACallHeldOnOneReplicaIsAnsweredOnAnother(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	watch := r2.hub.Watch()
	defer watch.Close()
	p := r1.broker.Open(approval.Request{Session: "s1", Agent: "alice", Tool: "web.submit_form", Command: "submit_form", Why: []string{"critical tier"}}, time.Minute)
	q := held(t, r2, p.ID)
	if q.Replica != "r1" || q.Agent != "alice" || q.Command != "submit_form" {
		t.Fatalf("r2 lists %+v", q)
	}
	select {
	case e := <-watch.C:
		if e.Type != events.ApprovalAsked || e.Approval != p.ID {
			t.Fatalf("r2's first event: %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("r2's events never told of r1's held call")
	}
	if err := r2.broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelConsole, By: "olga"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := p.Wait(ctx)
	if !o.Approved || o.Channel != approval.ChannelConsole || o.By != "olga (replica r2)" {
		t.Fatalf("r1's call got %+v", o)
	}
	if err := r2.broker.Decide(p.ID, approval.Outcome{Approved: false, Channel: approval.ChannelConsole, By: "olga"}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("a second answer: %v, want ErrUnknown", err)
	}
}

// TestASecretAnswerStaysOnItsReplica: a question whose answer is secret
// is answered on the replica that holds it, never through the store.
func TestASecretAnswerStaysOnItsReplica(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.await_human", Question: "the one-time code?", SecretAnswer: true, SecretDomains: []string{"bank.example"}}, time.Minute)
	held(t, r2, p.ID)
	err := r2.broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelConsole, By: "olga", Answer: "493817", Answering: true})
	if !errors.Is(err, approval.ErrSecretStaysHere) || !strings.Contains(err.Error(), "replica r1") {
		t.Fatalf("a secret answer given on r2: %v", err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM fleet_held WHERE position(convert_to('493817', 'UTF8') in coalesce(answer, ''::bytea)) > 0`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the secret is in the store: %v %d", err, n)
	}
}

// TestAnAnswerWithoutTheFleetsKeyIsIgnored: a replica with another key
// (not the operators' file) is not shown the call, and an answer written
// into the store by whoever does not hold the key does not answer it: the
// call stays held for a real answer.
func TestAnAnswerWithoutTheFleetsKeyIsIgnored(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	mallory := newReplica(t, pool, "r3", "not the operators' file")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	held(t, r2, p.ID)
	for _, q := range mallory.broker.List() {
		if q.ID == p.ID {
			t.Fatal("a replica with another key is shown the call")
		}
	}
	if _, err := pool.Exec(context.Background(), `UPDATE fleet_held SET answer = convert_to('{"approved":true,"channel":"console","by":"mallory","from":"r2"}', 'UTF8'), mac = repeat('0', 64);
		SELECT pg_notify('browsergate_held', '')`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // r1 looks at every notification and every second
	if p.Answered() {
		t.Fatal("an answer without the fleet's key answered the call")
	}
	held(t, r2, p.ID)
	if err := r2.broker.Decide(p.ID, approval.Outcome{Approved: false, Channel: approval.ChannelConsole, By: "olga"}); err != nil {
		t.Fatalf("the real answer after the forged one: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o := p.Wait(ctx); o.Approved || o.By != "olga (replica r2)" {
		t.Fatalf("r1's call got %+v, want olga's denial", o)
	}
}

// TestARequestChangedInTheStoreIsNotShown: what an operator approves is
// what the holder asked: a request rewritten in the store (to look
// harmless, or to drop its secret answer) is not listed on another
// replica, and cannot be answered there.
func TestARequestChangedInTheStoreIsNotShown(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.submit_form", Command: "submit_form", Args: map[string]any{"form": "wire-transfer"}, Why: []string{"critical"}}, time.Minute)
	held(t, r2, p.ID)
	if _, err := pool.Exec(context.Background(), `UPDATE fleet_held SET request = convert_to(replace(convert_from(request, 'UTF8'), 'wire-transfer', 'newsletter'), 'UTF8')`); err != nil {
		t.Fatal(err)
	}
	unlisted(t, r2, p.ID, "the call whose request was rewritten in the store")
	if err := r2.broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelConsole, By: "olga"}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("approving the rewritten request on r2: %v, want ErrUnknown", err)
	}
	if p.Answered() {
		t.Fatal("the call was answered")
	}
}

// TestTheFirstAnswerWins: answered on r2 first, a call then answered on
// r1 itself is refused there; the call takes r2's answer.
func TestTheFirstAnswerWins(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	held(t, r2, p.ID)
	if err := r2.broker.Decide(p.ID, approval.Outcome{Approved: false, Channel: approval.ChannelConsole, By: "olga"}); err != nil {
		t.Fatal(err)
	}
	if err := r1.broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelOperator, By: "bob"}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("a second answer, on the holder: %v, want ErrUnknown", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o := p.Wait(ctx); o.Approved || o.By != "olga (replica r2)" {
		t.Fatalf("the call got %+v, want olga's denial", o)
	}
}

// nextEvent waits for w's next event of type kind.
func nextEvent(t *testing.T, w *events.Watch, kind string) events.Event {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case e := <-w.C:
			if e.Type == kind {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

// TestTheOtherReplicasAreToldWhatBecameOfACall: a replica that was told of
// another's held call is told of its end too: the answer given on a third
// replica, and a call nobody answered.
func TestTheOtherReplicasAreToldWhatBecameOfACall(t *testing.T) {
	pool := newPool(t)
	r1, r2, r3 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators"), newReplica(t, pool, "r3", "operators")
	watch := r3.hub.Watch()
	defer watch.Close()
	p := r1.broker.Open(approval.Request{Session: "s1", Agent: "alice", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	held(t, r2, p.ID)
	if e := nextEvent(t, watch, events.ApprovalAsked); e.Approval != p.ID {
		t.Fatalf("r3 told of %+v", e)
	}
	if err := r2.broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelConsole, By: "olga"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.Wait(ctx)
	e := nextEvent(t, watch, events.ApprovalAnswered)
	if e.Approval != p.ID || e.Allowed == nil || !*e.Allowed || e.By != "olga (replica r2)" || e.Channel != approval.ChannelConsole || e.Agent != "alice" || e.Command != "click" {
		t.Errorf("r3 told of the answer as %+v", e)
	}

	q := r1.broker.Open(approval.Request{Session: "s1", Agent: "alice", Tool: "web.click", Command: "click", Why: []string{"approval"}}, 500*time.Millisecond)
	if e := nextEvent(t, watch, events.ApprovalAsked); e.Approval != q.ID {
		t.Fatalf("r3 told of %+v", e)
	}
	q.Wait(context.Background())
	if e := nextEvent(t, watch, events.ApprovalAnswered); e.Approval != q.ID || e.Allowed == nil || *e.Allowed || e.Channel != approval.ChannelTimeout {
		t.Errorf("r3 told of the unanswered call as %+v", e)
	}
}

// TestADeadReplicasCallsAreNotAnswered: once a replica's desk has stopped
// (the replica died) and it is silent for longer than the fleet waits, its
// held calls are no longer listed elsewhere, and an answer to one is
// refused, saying the replica is down.
func TestADeadReplicasCallsAreNotAnswered(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	req := held(t, r2, p.ID)
	r1.stop()
	// As if it had been silent for a minute.
	if _, err := pool.Exec(context.Background(), `UPDATE fleet_desks SET alive = now() - interval '1 minute' WHERE replica = 'r1'`); err != nil {
		t.Fatal(err)
	}
	err := r2.desk.Answer(req, approval.Outcome{Approved: true, Channel: approval.ChannelConsole, By: "olga"})
	if !errors.Is(err, approval.ErrUnknown) || !strings.Contains(err.Error(), "replica r1 has not been heard from") {
		t.Errorf("an answer to a dead replica's call: %v", err)
	}
	unlisted(t, r2, p.ID, "the dead replica's call")
}

// TestAForgedOutcomeDoesNotSilenceTheEnd: a row written into the
// outcomes by whoever writes the database (no fleet MAC) under a held
// call's id before the call ends is replaced by the holder's own outcome:
// the other replicas are told the call ended.
func TestAForgedOutcomeDoesNotSilenceTheEnd(t *testing.T) {
	pool := newPool(t)
	r1, r3 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r3", "operators")
	watch := r3.hub.Watch()
	defer watch.Close()
	p := r1.broker.Open(approval.Request{Session: "s1", Agent: "alice", Tool: "web.click", Command: "click", Why: []string{"approval"}}, 2*time.Second)
	if e := nextEvent(t, watch, events.ApprovalAsked); e.Approval != p.ID {
		t.Fatalf("r3 told of %+v", e)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO fleet_held_outcomes (id, replica, outcome, mac) VALUES ($1, 'r1', '{"approved":true}', 'forged')`, p.ID); err != nil {
		t.Fatal(err)
	}
	p.Wait(context.Background())
	if e := nextEvent(t, watch, events.ApprovalAnswered); e.Approval != p.ID || e.Allowed == nil || *e.Allowed || e.Channel != approval.ChannelTimeout {
		t.Errorf("r3 told of the end as %+v, want the holder's timeout", e)
	}
}

// TestARestartedReplicasOldCallsEnd: a replica killed with a call held and
// started again under the same name (as systemd does) holds none of its
// previous run's calls: the call is no longer listed elsewhere, an answer
// to it is refused, and the other replicas are told it ended.
func TestARestartedReplicasOldCallsEnd(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	watch := r2.hub.Watch()
	defer watch.Close()
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	req := held(t, r2, p.ID)
	r1.stop() // killed: its row stays
	_ = newReplica(t, pool, "r1", "operators")
	unlisted(t, r2, p.ID, "the previous run's call")
	if err := r2.desk.Answer(req, approval.Outcome{Approved: true, Channel: approval.ChannelConsole, By: "olga"}); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("an answer to the previous run's call: %v, want ErrUnknown", err)
	}
	if e := nextEvent(t, watch, events.ApprovalAnswered); e.Approval != p.ID || e.Channel != approval.ChannelCancelled || !strings.Contains(e.Reason, "started again") {
		t.Errorf("r2 told of the end as %+v", e)
	}
}

// TestAWithdrawnCallIsToldEnded: a held call withdrawn on its replica (its
// session ended) is told ended on the others.
func TestAWithdrawnCallIsToldEnded(t *testing.T) {
	pool := newPool(t)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	watch := r2.hub.Watch()
	defer watch.Close()
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	if e := nextEvent(t, watch, events.ApprovalAsked); e.Approval != p.ID {
		t.Fatalf("r2 told of %+v", e)
	}
	r1.broker.Withdraw(p.ID)
	if e := nextEvent(t, watch, events.ApprovalAnswered); e.Approval != p.ID || e.Channel != approval.ChannelCancelled || !strings.Contains(e.Reason, "withdrawn") {
		t.Errorf("r2 told of the withdrawal as %+v", e)
	}
}

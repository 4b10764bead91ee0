// Package central shares a fleet's held calls through PostgreSQL, so that
// the console, `browsergate approvals` and /events of any replica see, and
// decide, the calls every replica holds for a human (approval.Fleet).
//
// Each replica writes the calls its broker holds to a table, each with a
// MAC of the request's bytes, and deletes them when they end; the others
// list only requests whose MAC verifies, so what an operator is shown is
// what the holder asked. An answer given on another replica is written on
// the call's row with a MAC over the call's id, replica, request MAC and
// the answer; the holder, told by a notification (and by a poll, should
// one be lost), checks it against the request it wrote and answers its
// broker with it. The MACs are keyed by the operators' token file all the
// replicas share: whoever can write the database but does not hold that
// file can neither answer a call nor change what an operator approves. A
// secret answer never crosses: it is given on the holding replica. The
// first answer wins, wherever it was given (Claim).
package central

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	evidencecentral "github.com/browsergate/browsergate/evidence/central"
)

const schema = `
CREATE TABLE fleet_held (
	id          text PRIMARY KEY,
	replica     text NOT NULL,
	request     bytea NOT NULL, -- bytes as MACed
	request_mac text NOT NULL,
	deadline    timestamptz NOT NULL,
	answer      bytea,          -- bytes as MACed
	mac         text
);
CREATE INDEX fleet_held_replica ON fleet_held (replica);
`

// schemaOutcomes takes part "held" from version 1 to 2: what became of
// each replica's held calls (for the other replicas' /events and
// consoles), and when each replica's desk was last running (a call of a
// replica not heard from is not offered for an answer).
const schemaOutcomes = `
CREATE TABLE fleet_held_outcomes (
	id      text NOT NULL,
	replica text NOT NULL,
	outcome bytea NOT NULL, -- bytes as MACed; never a question's answer
	mac     text NOT NULL,
	at      timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (id, replica)
);
CREATE INDEX fleet_held_outcomes_at ON fleet_held_outcomes (at);
CREATE TABLE fleet_desks (
	replica text PRIMARY KEY,
	alive   timestamptz NOT NULL
);
`

// aliveEvery is how often a desk stamps its replica alive; a replica not
// stamped for silentAfter is taken for down: its held calls are neither
// listed nor answered elsewhere (its agents' calls failed with it).
const (
	aliveEvery  = 2 * time.Second
	silentAfter = 10 * time.Second
)

// channel is the notification an answer, or a new held call, sends.
const channel = "browsergate_held"

// Desk is one replica's side of the fleet's held calls.
type Desk struct {
	pool    *pgxpool.Pool
	replica string
	key     []byte
	broker  *approval.Broker
	hub     *events.Hub
	logger  *slog.Logger
	// ops are the writes of Opened and Closed, in order, for Run: the
	// call path never waits for the store.
	ops chan op

	mu     sync.Mutex
	own    map[string]string           // this replica's calls: id -> request MAC
	others []other                     // the other replicas' calls, as Run last read them
	seen   map[string]approval.Request // the other replicas' calls already told to the hub
	ended  map[string]time.Time        // of those, the ones whose end was told, with their deadline
	forged map[string]bool             // outcomes without the fleet's MAC, logged once
}

// other is another replica's call, its request verified.
type other struct {
	req approval.Request
	mac string
}

// op is a write Run makes for Opened (req set) or Closed (outcome set
// when the call was waited for).
type op struct {
	id      string
	req     []byte
	mac     string
	at      time.Time
	outcome []byte
}

// opsQueue bounds the writes waiting for the store.
const opsQueue = 1024

// New makes the table if it is not there and returns the desk of replica,
// answering broker. key keys the MACs: every replica must be given the
// same (the operators' token file's contents). Events of the other
// replicas' calls go to hub.
func New(ctx context.Context, pool *pgxpool.Pool, replica string, key []byte, broker *approval.Broker, hub *events.Hub, logger *slog.Logger) (*Desk, error) {
	if len(key) == 0 {
		return nil, errors.New("fleet approvals: no key for answers (the operators' token file)")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := evidencecentral.MigratePart(ctx, pool, "held", schema, schemaOutcomes); err != nil {
		return nil, fmt.Errorf("fleet approvals: %w", err)
	}
	mac := sha256.Sum256(append([]byte("browsergate fleet answers\n"), key...))
	d := &Desk{pool: pool, replica: replica, key: mac[:], broker: broker, hub: hub, logger: logger,
		ops: make(chan op, opsQueue), own: map[string]string{}, seen: map[string]approval.Request{}, ended: map[string]time.Time{}, forged: map[string]bool{}}
	if err := d.endPreviousRun(ctx); err != nil {
		return nil, fmt.Errorf("fleet approvals: %w", err)
	}
	return d, nil
}

// endPreviousRun ends the calls the store holds under this replica's name:
// a replica starting holds none yet, so they are a previous run's (killed,
// then started again), which died with it. They must not be offered for
// an answer as this run's; the other replicas are told they ended.
func (d *Desk) endPreviousRun(ctx context.Context) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `DELETE FROM fleet_held WHERE replica = $1 RETURNING id`, d.replica)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("clear the held calls of this replica's previous run: %w", err)
		}
		for _, id := range ids {
			raw, mac, err := d.outcome(id, approval.Outcome{Channel: approval.ChannelCancelled, At: time.Now(),
				Note: "its replica stopped (killed, or crashed) while the call was held, and started again: the call ended with the run that held it"})
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `WITH told AS (`+tellOutcome+`) SELECT count(*) FROM told`, id, d.replica, raw, mac); err != nil {
				return fmt.Errorf("tell the end of a held call of this replica's previous run: %w", err)
			}
		}
		return nil
	})
}

// timeout bounds one statement of the desk.
const timeout = 5 * time.Second

// mac is the MAC of the parts, each length-prefixed.
func (d *Desk) mac(parts ...[]byte) string {
	h := hmac.New(sha256.New, d.key)
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Opened queues the write of a call this replica holds, with the MAC of
// its request.
func (d *Desk) Opened(r approval.Request) {
	r.Replica = d.replica
	raw, err := json.Marshal(r)
	if err != nil {
		d.logger.Error("a held call is not shown to the fleet's other replicas", "id", r.ID, "error", err)
		return
	}
	m := d.mac([]byte("request"), []byte(r.ID), []byte(d.replica), raw)
	d.mu.Lock()
	d.own[r.ID] = m
	d.mu.Unlock()
	d.queue(op{id: r.ID, req: raw, mac: m, at: r.Deadline})
}

// Closed queues the deletion of a call this replica no longer holds, and
// the write of its outcome with its MAC, for the other replicas' /events.
// A question's answer is not written: it may be a secret.
func (d *Desk) Closed(id string, o approval.Outcome) {
	d.mu.Lock()
	delete(d.own, id)
	d.mu.Unlock()
	w := op{id: id}
	if raw, mac, err := d.outcome(id, o); err == nil {
		w.outcome, w.mac = raw, mac
	}
	d.queue(w)
}

// outcome is the outcome of this replica's call id as it crosses the
// store (never a question's answer: it may be a secret), and its MAC.
func (d *Desk) outcome(id string, o approval.Outcome) (raw []byte, mac string, err error) {
	raw, err = json.Marshal(answer{Approved: o.Approved, Channel: o.Channel, By: o.By, At: o.At, Note: o.Note, Answering: o.Answering, From: d.replica})
	return raw, d.outcomeMAC(id, d.replica, raw), err
}

// outcomeMAC is the MAC of the outcome raw of replica's call id.
func (d *Desk) outcomeMAC(id, replica string, raw []byte) string {
	return d.mac([]byte("outcome"), []byte(id), []byte(replica), raw)
}

// tellOutcome writes an outcome ($1 id, $2 replica, $3 outcome, $4 MAC),
// over any row under that call (one written by other hands included).
const tellOutcome = `INSERT INTO fleet_held_outcomes (id, replica, outcome, mac) VALUES ($1, $2, $3, $4)
	ON CONFLICT (id, replica) DO UPDATE SET outcome = EXCLUDED.outcome, mac = EXCLUDED.mac, at = now() RETURNING 1`

func (d *Desk) queue(o op) {
	select {
	case d.ops <- o:
	default:
		d.logger.Error("too many held calls waiting to be written to the fleet's store: one is not shown to the other replicas", "id", o.id)
	}
}

// Others lists the calls the other replicas hold, not yet answered, whose
// request verifies, as Run last read them (every second, and at each
// notification). A store that cannot be read lists none.
func (d *Desk) Others() []approval.Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]approval.Request, 0, len(d.others))
	for _, o := range d.others {
		if time.Now().Before(o.req.Deadline) {
			out = append(out, o.req)
		}
	}
	return out
}

// answer is an answer as it crosses the store.
type answer struct {
	Approved  bool      `json:"approved"`
	Channel   string    `json:"channel"`
	By        string    `json:"by,omitempty"`
	At        time.Time `json:"at"`
	Note      string    `json:"note,omitempty"`
	Answer    string    `json:"answer,omitempty"`
	Answering bool      `json:"answering,omitempty"`
	From      string    `json:"from"` // the replica it was given on
}

// Answer writes the answer to a call another replica holds, bound to the
// request the holder wrote, and tells it.
func (d *Desk) Answer(r approval.Request, o approval.Outcome) error {
	d.mu.Lock()
	var reqMAC string
	for _, x := range d.others {
		if x.req.ID == r.ID && x.req.Replica == r.Replica {
			reqMAC = x.mac
		}
	}
	d.mu.Unlock()
	if reqMAC == "" {
		return fmt.Errorf("%w: %q (not listed as held by replica %s)", approval.ErrUnknown, r.ID, r.Replica)
	}
	raw, err := json.Marshal(answer{Approved: o.Approved, Channel: o.Channel, By: o.By, At: o.At, Note: o.Note,
		Answer: o.Answer, Answering: o.Answering, From: d.replica})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	m := d.mac([]byte("answer"), []byte(r.ID), []byte(r.Replica), []byte(reqMAC), raw)
	var alive, given bool
	err = d.pool.QueryRow(ctx, `WITH up AS (SELECT 1 FROM fleet_desks WHERE replica = $2 AND alive > now() - $6 * interval '1 millisecond'),
		given AS (UPDATE fleet_held SET answer = $3, mac = $4
			WHERE id = $1 AND replica = $2 AND request_mac = $5 AND answer IS NULL AND deadline > now() AND EXISTS (SELECT 1 FROM up) RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM up), EXISTS (SELECT 1 FROM given)`, r.ID, r.Replica, raw, m, reqMAC, silentAfter.Milliseconds()).Scan(&alive, &given)
	if err != nil {
		return fmt.Errorf("answer %s on replica %s through the fleet's store: %w", r.ID, r.Replica, err)
	}
	if !alive {
		return fmt.Errorf("%w: %q (replica %s has not been heard from for %s: it is down, and its agent's call ended with it)", approval.ErrUnknown, r.ID, r.Replica, silentAfter)
	}
	if !given {
		return fmt.Errorf("%w: %q (no longer waiting on replica %s: answered, expired or withdrawn)", approval.ErrUnknown, r.ID, r.Replica)
	}
	if _, err := d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, r.ID); err != nil {
		d.logger.Warn("replica not told of an answer; it finds it at its next look", "id", r.ID, "error", err)
	}
	return nil
}

// Claim takes this replica's call off the fleet's table before it is
// answered here with o. When another replica's answer, carrying the
// fleet's MAC for this call, got there first, that answer is taken and o
// refused; an answer without it is ignored. When the store cannot say, a
// denial is taken here (it cannot do what nobody approved) and an
// approval refused, to be given again.
func (d *Desk) Claim(id string, o approval.Outcome) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var raw []byte
	var mac *string
	// The row's latest version, whatever committed meanwhile: a DELETE
	// waits for a concurrent answer's UPDATE and returns what it wrote.
	err := d.pool.QueryRow(ctx, `DELETE FROM fleet_held WHERE id = $1 AND replica = $2 RETURNING answer, mac`, id, d.replica).Scan(&raw, &mac)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil // not in the table (yet): this replica's alone
	case err != nil && o.Approved:
		return fmt.Errorf("%w: the fleet's store did not say whether another replica answered %s first (%v): give the answer again", approval.ErrUnavailable, id, err)
	case err != nil:
		d.logger.Warn("the fleet's store did not say whether another replica answered first; a denial is taken here", "id", id, "error", err)
		return nil
	case raw == nil || mac == nil:
		return nil
	}
	if !d.answerVerifies(id, raw, *mac) {
		d.logger.Error("an answer in the fleet's store does not carry the fleet's MAC for this call: ignored, answered here", "id", id)
		return nil
	}
	from := d.decideFrom(id, raw)
	if from == "" {
		return nil // the broker did not take it: answered here
	}
	return fmt.Errorf("%w: %q was answered first on replica %s, whose answer is taken", approval.ErrUnknown, id, from)
}

// Run writes this replica's calls, reads the others', takes the answers
// given elsewhere to this replica's calls and tells the hub of the
// others' new calls, until ctx ends: at each notification, and every
// second besides.
func (d *Desk) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	go d.listen(ctx, wake)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var swept, stamped time.Time
	for {
		if time.Since(stamped) >= aliveEvery {
			d.stampAlive(ctx)
			stamped = time.Now()
		}
		d.write(ctx)
		d.read(ctx)
		d.take(ctx)
		d.announce()
		d.tellEnds(ctx)
		if time.Since(swept) > time.Minute {
			d.sweep(ctx)
			swept = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		case o := <-d.ops:
			d.apply(ctx, o)
		}
	}
}

// write applies the queued writes.
func (d *Desk) write(ctx context.Context) {
	for {
		select {
		case o := <-d.ops:
			d.apply(ctx, o)
		default:
			return
		}
	}
}

func (d *Desk) apply(ctx context.Context, o op) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	if o.req != nil {
		_, err = d.pool.Exec(qctx, `WITH held AS (INSERT INTO fleet_held (id, replica, request, request_mac, deadline) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT DO NOTHING RETURNING 1) SELECT pg_notify($6, '') FROM held`, o.id, d.replica, o.req, o.mac, o.at, channel)
	} else if o.outcome != nil {
		_, err = d.pool.Exec(qctx, `WITH gone AS (DELETE FROM fleet_held WHERE id = $1 AND replica = $2),
			told AS (`+tellOutcome+`)
			SELECT pg_notify($5, '') FROM told`, o.id, d.replica, o.outcome, o.mac, channel)
	} else {
		_, err = d.pool.Exec(qctx, `DELETE FROM fleet_held WHERE id = $1 AND replica = $2`, o.id, d.replica)
	}
	if err != nil && ctx.Err() == nil {
		d.logger.Error("a held call's row in the fleet's store was not written (the call is answered on its replica as without a fleet; a row left is swept after its deadline)", "id", o.id, "error", err)
	}
}

// read reads the other replicas' calls whose request verifies.
func (d *Desk) read(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rows, _ := d.pool.Query(qctx, `SELECT h.id, h.replica, h.request, h.request_mac FROM fleet_held h JOIN fleet_desks k USING (replica)
		WHERE h.replica <> $1 AND h.answer IS NULL AND h.deadline > now() AND k.alive > now() - $2 * interval '1 millisecond' ORDER BY h.deadline`,
		d.replica, silentAfter.Milliseconds())
	var out []other
	var id, replica, m string
	var raw []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &replica, &raw, &m}, func() error {
		var r approval.Request
		if !hmac.Equal([]byte(m), []byte(d.mac([]byte("request"), []byte(id), []byte(replica), raw))) ||
			json.Unmarshal(raw, &r) != nil || r.ID != id || r.Replica != replica {
			d.logger.Error("a held call in the fleet's store does not carry the fleet's MAC: not shown", "id", id, "replica", replica)
			return nil
		}
		out = append(out, other{req: r, mac: m})
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			d.logger.Error("the fleet's held calls could not be read: the other replicas' are not listed", "error", err)
		}
		out = nil
	}
	d.mu.Lock()
	d.others = out
	d.mu.Unlock()
}

// sweep deletes the rows past their deadline: a dead replica's.
func (d *Desk) sweep(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := d.pool.Exec(qctx, `DELETE FROM fleet_held WHERE deadline < now() - interval '1 minute'`); err != nil && ctx.Err() == nil {
		d.logger.Warn("the fleet's expired held calls were not swept", "error", err)
	}
	if _, err := d.pool.Exec(qctx, `DELETE FROM fleet_held_outcomes WHERE at < now() - interval '10 minutes'`); err != nil && ctx.Err() == nil {
		d.logger.Warn("the fleet's old held-call outcomes were not swept", "error", err)
	}
}

// listen wakes Run at every notification, on a connection of its own.
func (d *Desk) listen(ctx context.Context, wake chan<- struct{}) {
	for ctx.Err() == nil {
		conn, err := d.pool.Acquire(ctx)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+channel); err == nil {
				for {
					if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
						break
					}
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
			// A connection that listened is not handed to anyone else.
			conn.Conn().Close(context.Background())
			conn.Release()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// take answers this replica's calls that were answered elsewhere.
func (d *Desk) take(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rows, _ := d.pool.Query(qctx, `SELECT id, answer, mac FROM fleet_held WHERE replica = $1 AND answer IS NOT NULL`, d.replica)
	type given struct {
		id, mac string
		raw     []byte
	}
	var all []given
	var g given
	if _, err := pgx.ForEachRow(rows, []any{&g.id, &g.raw, &g.mac}, func() error { all = append(all, g); return nil }); err != nil {
		if ctx.Err() == nil {
			d.logger.Error("the answers of the fleet's other replicas could not be read", "error", err)
		}
		return
	}
	for _, g := range all {
		d.takeOne(qctx, g.id, g.raw, g.mac)
	}
}

// takeOne checks an answer against the request this replica wrote, and
// answers its broker with it.
func (d *Desk) takeOne(ctx context.Context, id string, raw []byte, mac string) {
	d.mu.Lock()
	_, mine := d.own[id]
	d.mu.Unlock()
	if !mine {
		return // no longer held here: Closed deletes the row
	}
	if !d.answerVerifies(id, raw, mac) {
		// Not written by a replica that holds the operators' file, or not
		// for the request this replica asked: the call stays held, for an
		// answer that is.
		d.logger.Error("an answer in the fleet's store does not carry the fleet's MAC for this call: ignored, the call stays held", "id", id)
		_, _ = d.pool.Exec(ctx, `UPDATE fleet_held SET answer = NULL, mac = NULL WHERE id = $1 AND replica = $2`, id, d.replica)
		return
	}
	if d.decideFrom(id, raw) != "" {
		_, _ = d.pool.Exec(ctx, `DELETE FROM fleet_held WHERE id = $1 AND replica = $2`, id, d.replica)
	}
}

// answerVerifies checks an answer's MAC against the request this replica
// wrote for call id.
func (d *Desk) answerVerifies(id string, raw []byte, mac string) bool {
	d.mu.Lock()
	reqMAC, mine := d.own[id]
	d.mu.Unlock()
	return mine && hmac.Equal([]byte(mac), []byte(d.mac([]byte("answer"), []byte(id), []byte(d.replica), []byte(reqMAC), raw)))
}

// decideFrom answers this replica's call id with a verified answer from
// another replica, and returns that replica ("" when the broker did not
// take it).
func (d *Desk) decideFrom(id string, raw []byte) string {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		d.logger.Error("an answer in the fleet's store is unreadable: ignored", "id", id, "error", err)
		return ""
	}
	by := strings.TrimSpace(a.By + " (replica " + a.From + ")")
	err := d.broker.DecideHere(id, approval.Outcome{Approved: a.Approved, Channel: a.Channel, By: by, Note: a.Note, Answer: a.Answer, Answering: a.Answering})
	if err != nil {
		d.logger.Warn("an answer from another replica was not taken", "id", id, "from", a.From, "error", err)
		return ""
	}
	return a.From
}

// announce publishes, once, each call another replica holds, so that
// /events and the console of this replica show it.
func (d *Desk) announce() {
	if d.hub == nil {
		return
	}
	others := d.Others()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range others {
		if _, told := d.seen[r.ID]; told {
			continue
		}
		d.seen[r.ID] = r
		d.hub.Publish(events.Event{Type: events.ApprovalAsked, Session: r.Session, Agent: r.Agent, Tool: r.Tool, Command: r.Command,
			Args: r.Args, URL: r.URL, Approval: r.ID, Detail: map[string]any{"replica": r.Replica, "why": r.Why, "question": r.Question}})
	}
	now := time.Now()
	for id, r := range d.seen { // forget the calls gone past their deadline (and a minute)
		if now.After(r.Deadline.Add(time.Minute)) {
			delete(d.seen, id)
			delete(d.ended, id)
			delete(d.forged, id)
		}
	}
}

// stampAlive notes that this replica's desk is running.
func (d *Desk) stampAlive(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := d.pool.Exec(qctx, `INSERT INTO fleet_desks (replica, alive) VALUES ($1, now()) ON CONFLICT (replica) DO UPDATE SET alive = now()`, d.replica); err != nil && ctx.Err() == nil {
		d.logger.Warn("this replica was not stamped alive in the fleet's store: the others stop offering its held calls after "+silentAfter.String(), "error", err)
	}
}

// tellEnds publishes, once, what became of each call another replica held
// that was announced here, when its holder wrote it with the fleet's MAC.
func (d *Desk) tellEnds(ctx context.Context) {
	if d.hub == nil {
		return
	}
	d.mu.Lock()
	var ids []string
	for id := range d.seen {
		if _, told := d.ended[id]; !told {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rows, _ := d.pool.Query(qctx, `SELECT id, replica, outcome, mac FROM fleet_held_outcomes WHERE id = ANY($1) AND replica <> $2`, ids, d.replica)
	var id, replica, m string
	var raw []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &replica, &raw, &m}, func() error {
		d.tellEnd(id, replica, raw, m)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		d.logger.Warn("the outcomes of the other replicas' held calls could not be read", "error", err)
	}
}

// tellEnd publishes the outcome of another replica's call id, once, if it
// carries the fleet's MAC.
func (d *Desk) tellEnd(id, replica string, raw []byte, m string) {
	var a answer
	if !hmac.Equal([]byte(m), []byte(d.outcomeMAC(id, replica, raw))) || json.Unmarshal(raw, &a) != nil {
		d.mu.Lock()
		logged := d.forged[id]
		d.forged[id] = true
		d.mu.Unlock()
		if !logged {
			d.logger.Error("a held call's outcome in the fleet's store does not carry the fleet's MAC: not told (its holder's own outcome replaces it)", "id", id, "replica", replica)
		}
		return
	}
	d.mu.Lock()
	r, ok := d.seen[id]
	_, told := d.ended[id]
	if ok && !told && r.Replica == replica {
		d.ended[id] = r.Deadline
	}
	d.mu.Unlock()
	if !ok || told || r.Replica != replica {
		return
	}
	d.hub.Publish(events.Event{Type: events.ApprovalAnswered, Session: r.Session, Agent: r.Agent, Tool: r.Tool, Command: r.Command,
		Approval: id, Allowed: events.Bool(a.Approved), Channel: a.Channel, By: a.By, Reason: a.Note, Detail: map[string]any{"replica": replica}})
}

// Package central shares a fleet's held calls through PostgreSQL, so that
// the console, `browsergate approvals` and /events of any replica see, and
// decide, the calls every replica holds for a human (approval.Fleet).
//
// Each replica writes the calls its broker holds to a table, and deletes
// them when they end. An answer given on another replica is written on
// the call's row, with a MAC keyed by the operators' token file all the
// replicas share, and the holding replica, told by a notification (and
// by a poll, should one be lost), checks the MAC and answers its broker
// with it: whoever can write the database but does not hold the token
// file cannot answer a call. A secret answer never crosses: it is given
// on the holding replica.
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
	id       text PRIMARY KEY,
	replica  text NOT NULL,
	request  jsonb NOT NULL,
	deadline timestamptz NOT NULL,
	answer   bytea, -- bytes as MACed (jsonb would reorder them)
	mac      text
);
CREATE INDEX fleet_held_replica ON fleet_held (replica);
`

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

	mu   sync.Mutex
	seen map[string]bool // the other replicas' calls already told to the hub
}

// New makes the table if it is not there and returns the desk of replica,
// answering broker. key keys the MAC of answers: every replica must be
// given the same (the operators' token file's contents). Events of the
// other replicas' calls go to hub.
func New(ctx context.Context, pool *pgxpool.Pool, replica string, key []byte, broker *approval.Broker, hub *events.Hub, logger *slog.Logger) (*Desk, error) {
	if len(key) == 0 {
		return nil, errors.New("fleet approvals: no key for answers (the operators' token file)")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	err := evidencecentral.MigratePart(ctx, pool, "held", 1, schema)
	if err != nil {
		return nil, fmt.Errorf("fleet approvals: %w", err)
	}
	mac := sha256.Sum256(append([]byte("browsergate fleet answers\n"), key...))
	return &Desk{pool: pool, replica: replica, key: mac[:], broker: broker, hub: hub, logger: logger, seen: map[string]bool{}}, nil
}

// timeout bounds one statement of the desk.
const timeout = 5 * time.Second

// Opened writes a call this replica holds.
func (d *Desk) Opened(r approval.Request) {
	r.Replica = d.replica
	raw, err := json.Marshal(r)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err = d.pool.Exec(ctx, `WITH held AS (INSERT INTO fleet_held (id, replica, request, deadline) VALUES ($1, $2, $3, $4) RETURNING 1)
			SELECT pg_notify($5, '') FROM held`, r.ID, d.replica, raw, r.Deadline, channel)
	}
	if err != nil {
		// The call is still held here, and answered here.
		d.logger.Error("a held call is not shown to the fleet's other replicas", "id", r.ID, "error", err)
	}
}

// Closed deletes a call this replica no longer holds.
func (d *Desk) Closed(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := d.pool.Exec(ctx, `DELETE FROM fleet_held WHERE id = $1 AND replica = $2`, id, d.replica); err != nil {
		d.logger.Warn("an ended held call is left in the fleet's table until its deadline", "id", id, "error", err)
	}
}

// Others lists the calls the other replicas hold, not yet answered. A
// store that cannot be read lists none (and says so in the log): no call
// is answered from a list that could not be read.
func (d *Desk) Others() []approval.Request {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rows, _ := d.pool.Query(ctx, `SELECT request FROM fleet_held WHERE replica <> $1 AND answer IS NULL AND deadline > now() ORDER BY deadline`, d.replica)
	var out []approval.Request
	var raw []byte
	_, err := pgx.ForEachRow(rows, []any{&raw}, func() error {
		var r approval.Request
		if err := json.Unmarshal(raw, &r); err != nil || r.Replica == "" || r.Replica == d.replica {
			return nil
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		d.logger.Error("the fleet's held calls could not be read", "error", err)
		return nil
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

// mac binds an answer to the call's id and its replica.
func (d *Desk) mac(id, replica string, raw []byte) string {
	h := hmac.New(sha256.New, d.key)
	fmt.Fprintf(h, "%s\n%s\n", id, replica)
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// Answer writes the answer to a call another replica holds, and tells it.
func (d *Desk) Answer(r approval.Request, o approval.Outcome) error {
	raw, err := json.Marshal(answer{Approved: o.Approved, Channel: o.Channel, By: o.By, At: o.At, Note: o.Note,
		Answer: o.Answer, Answering: o.Answering, From: d.replica})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tag, err := d.pool.Exec(ctx, `UPDATE fleet_held SET answer = $3, mac = $4
		WHERE id = $1 AND replica = $2 AND answer IS NULL AND deadline > now()`, r.ID, r.Replica, raw, d.mac(r.ID, r.Replica, raw))
	if err != nil {
		return fmt.Errorf("answer %s on replica %s through the fleet's store: %w", r.ID, r.Replica, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %q (no longer held by replica %s)", approval.ErrUnknown, r.ID, r.Replica)
	}
	if _, err := d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, r.ID); err != nil {
		d.logger.Warn("replica not told of an answer; it finds it at its next look", "id", r.ID, "error", err)
	}
	return nil
}

// Run takes the answers given on other replicas to this replica's calls,
// and tells the hub of the other replicas' new calls, until ctx ends: at
// each notification, and every second besides.
func (d *Desk) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	go d.listen(ctx, wake)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		d.take(ctx)
		d.announce()
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// listen wakes Run at every notification, on a connection of its own.
func (d *Desk) listen(ctx context.Context, wake chan<- struct{}) {
	for ctx.Err() == nil {
		conn, err := d.pool.Acquire(ctx)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err == nil {
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

func (d *Desk) takeOne(ctx context.Context, id string, raw []byte, mac string) {
	if !hmac.Equal([]byte(mac), []byte(d.mac(id, d.replica, raw))) {
		// Not written by a replica that holds the operators' file: the
		// call stays held, for an answer that is.
		d.logger.Error("an answer in the fleet's store does not carry the fleet's MAC: ignored, the call stays held", "id", id)
		_, _ = d.pool.Exec(ctx, `UPDATE fleet_held SET answer = NULL, mac = NULL WHERE id = $1 AND replica = $2`, id, d.replica)
		return
	}
	// Taken once: the row goes, whatever the broker makes of the answer
	// (an answer it refuses leaves the call held here, answered here).
	_, _ = d.pool.Exec(ctx, `DELETE FROM fleet_held WHERE id = $1 AND replica = $2`, id, d.replica)
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		d.logger.Error("an answer in the fleet's store is unreadable: ignored", "id", id, "error", err)
		return
	}
	by := strings.TrimSpace(a.By + " (replica " + a.From + ")")
	err := d.broker.Decide(id, approval.Outcome{Approved: a.Approved, Channel: a.Channel, By: by, Note: a.Note, Answer: a.Answer, Answering: a.Answering})
	if err != nil {
		d.logger.Warn("an answer from another replica was not taken", "id", id, "from", a.From, "error", err)
	}
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
	now := map[string]bool{}
	for _, r := range others {
		now[r.ID] = true
		if d.seen[r.ID] {
			continue
		}
		d.hub.Publish(events.Event{Type: events.ApprovalAsked, Session: r.Session, Agent: r.Agent, Tool: r.Tool, Command: r.Command,
			Args: r.Args, URL: r.URL, Approval: r.ID, Detail: map[string]any{"replica": r.Replica, "why": r.Why, "question": r.Question}})
	}
	d.seen = now
}

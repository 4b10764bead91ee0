// Package approval holds calls that need a human's decision. A held call
// waits in a Broker until a human approves or denies it through a channel
// the agent cannot reach (the operator socket, or MCP elicitation shown to
// the user by the client), or until its deadline passes, which denies it.
//
// An agent's question to the operator (await_human) is held the same way,
// and answered with text (Outcome.Answer) or declined (question.go).
//
// The broker knows nothing of MCP, sockets or Cedar: channels call Decide,
// the executor calls Open and Wait, and the operator listing calls List.
package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Channels through which an outcome is reached.
const (
	ChannelOperator    = "operator"    // browsergate approvals approve|deny
	ChannelElicitation = "elicitation" // MCP elicitation answered in the client
	ChannelTimeout     = "timeout"     // nobody answered before the deadline
	ChannelCancelled   = "cancelled"   // the call or the session ended first
	ChannelConsole     = "console"     // the operator console served by serve --http
	ChannelReplay      = "replay"      // evidence replay, answering as the recorded approval did
)

// ErrUnknown means Decide was given an id that is not pending: never held,
// already decided, or expired.
var ErrUnknown = errors.New("no pending approval with that id")

// Request is what a human is asked to decide: everything the call will do,
// so that nobody approves a command without seeing its arguments.
type Request struct {
	ID      string         `json:"id"`
	Session string         `json:"session"`
	Agent   string         `json:"agent,omitempty"` // the agent that made the call over HTTP ("" on stdio)
	Tool    string         `json:"tool"`            // MCP tool name
	Command string         `json:"command"`
	Args    map[string]any `json:"args,omitempty"` // as recorded: what is typed into a password field is masked
	Page    string         `json:"page,omitempty"` // the page the call acts on
	URL     string         `json:"url,omitempty"`  // where the call leads: its url argument, the link or form's destination, else the page
	Tier    string         `json:"risk_tier,omitempty"`
	Why     []string       `json:"why"` // what requires the approval
	// Question is set when the agent asks the operator a question
	// (await_human) rather than a call waiting for approval: the agent's
	// own words, untrusted, which every channel shows as text. Such a
	// request is answered with text (Outcome.Answer), or declined.
	Question string `json:"question,omitempty"`
	// SecretAnswer: the answer is kept from the agent (the manifest or the
	// agent declared it a secret); the operator can also mark one so.
	SecretAnswer bool `json:"secret_answer,omitempty"`
	// SecretDomains are where a secret answer to the question may be
	// typed (the host the question was asked on, or await_human's
	// secret_answer_domains), for the operator to see before giving one.
	// NoSecret says why no secret answer can be given to it (the page has
	// no host, or is not on secret_answer_domains): an answer marked
	// secret is then refused.
	SecretDomains []string `json:"secret_domains,omitempty"`
	NoSecret      string   `json:"no_secret,omitempty"`
	// Fingerprint binds the approval to the exact arguments, unmasked,
	// without showing them: a second round must carry the same.
	Fingerprint string    `json:"-"`
	Created     time.Time `json:"created"`
	Deadline    time.Time `json:"deadline"`
	// Replica is the fleet's replica that holds the call, for a call
	// another replica holds (Fleet); "" for this broker's own.
	Replica string `json:"replica,omitempty"`
}

// Summary is one line for a human: the call with its arguments, where it
// acts and leads, and why it needs approval.
func (r Request) Summary() string {
	var b strings.Builder
	if r.Agent != "" {
		b.WriteString(r.Agent + ": ")
	}
	b.WriteString(r.Tool)
	if len(r.Args) > 0 {
		args, _ := json.Marshal(r.Args)
		b.WriteString(" " + string(args))
	}
	if r.Page != "" {
		b.WriteString(" on " + r.Page)
	}
	if r.URL != "" && r.URL != r.Page {
		b.WriteString(", leading to " + r.URL)
	}
	fmt.Fprintf(&b, " (%s)", strings.Join(r.Why, "; "))
	return b.String()
}

// Outcome is the decision on a held call, or the lack of one.
type Outcome struct {
	Approved bool      `json:"approved"`
	Channel  string    `json:"channel"`
	By       string    `json:"by,omitempty"` // who answered, as the channel names them
	At       time.Time `json:"at"`
	Note     string    `json:"note,omitempty"`
	// Answer is the operator's answer to a question (Request.Question),
	// never encoded: a secret one must not reach a log or an event by way
	// of an outcome printed whole.
	Answer string `json:"-"`
	// Answering: the outcome is an answer to a question (the socket's
	// "answer", the console's "answer" verdict), even an empty one. The
	// broker takes it only for a question, and takes nothing else as a
	// question's approval: an empty answer must not approve a held call.
	Answering bool `json:"-"`
	// Secret: the operator marked the answer as a secret.
	Secret bool `json:"secret,omitempty"`
}

// Broker is the set of held calls. It is safe for concurrent use.
type Broker struct {
	now     func() time.Time
	mu      sync.Mutex
	pending map[string]*Pending
	fleet   Fleet
}

// Fleet is the held calls of a fleet's other replicas (approval/central):
// a Broker that has one tells it of each call it holds, lists the other
// replicas' calls beside its own, and answers theirs through it, so that
// an operator answers any replica's call on any replica.
type Fleet interface {
	// Opened and Closed tell the fleet of a call this broker holds, and
	// of its end with its outcome: answered, expired, cancelled, or
	// withdrawn (channel cancelled).
	Opened(Request)
	Closed(id string, o Outcome)
	// Others lists the calls the other replicas hold, not yet answered
	// (Request.Replica set).
	Others() []Request
	// Answer answers a call another replica holds, the answer already
	// checked against its request; ErrUnknown when it is no longer held
	// or was answered.
	Answer(req Request, o Outcome) error
	// Claim is asked before a call this broker holds is answered here
	// with o: an error (wrapping ErrUnknown) when another replica's answer
	// got there first, which the fleet then brings (DecideHere).
	Claim(id string, o Outcome) error
}

// SetFleet makes b a replica of a fleet: call it before the first Open.
func (b *Broker) SetFleet(f Fleet) { b.fleet = f }

// ErrUnavailable refuses an answer that could not be checked against the
// fleet's (the store did not answer): it may be given again.
var ErrUnavailable = errors.New("the answer could not be taken now")

// ErrSecretStaysHere refuses a secret answer to a question another
// replica holds: it would cross the fleet's store.
var ErrSecretStaysHere = errors.New("a secret answer does not cross the fleet's store")

// other is the call another replica holds under id, if the fleet lists
// one.
func (b *Broker) other(id string) (Request, bool) {
	if b.fleet == nil {
		return Request{}, false
	}
	for _, r := range b.fleet.Others() {
		if r.ID == id {
			return r, true
		}
	}
	return Request{}, false
}

// NewBroker returns an empty broker; now is its clock (nil: time.Now).
func NewBroker(now func() time.Time) *Broker {
	if now == nil {
		now = time.Now
	}
	return &Broker{now: now, pending: map[string]*Pending{}}
}

// Pending is one held call.
type Pending struct {
	Request
	b       *Broker
	done    chan Outcome // buffered: the first decision wins
	decided bool         // guarded by b.mu
}

// Open holds req for at most timeout: it assigns the id, the creation time
// and the deadline, and makes the call visible to List, Get and Decide.
// Whoever opens it must Wait for it, or it is dropped at its deadline.
func (b *Broker) Open(req Request, timeout time.Duration) *Pending {
	var raw [6]byte
	rand.Read(raw[:])
	req.ID = "apr-" + hex.EncodeToString(raw[:])
	req.Created = b.now()
	req.Deadline = req.Created.Add(timeout)
	p := &Pending{Request: req, b: b, done: make(chan Outcome, 1)}
	b.mu.Lock()
	b.pending[req.ID] = p
	b.mu.Unlock()
	if b.fleet != nil {
		b.fleet.Opened(req)
	}
	// A call whose client went away never waits: drop it a second past its
	// deadline (a Wait under way forgets it at the deadline itself, with
	// its outcome).
	time.AfterFunc(timeout+time.Second, func() {
		b.forget(req.ID, Outcome{Channel: ChannelTimeout, At: b.now(), Note: "no human answered before " + req.Deadline.UTC().Format(time.RFC3339) + ", and nothing waited for the answer"})
	})
	return p
}

// Get returns the held call id, answered or not, until it has been waited
// for or its deadline has passed; nil otherwise. A call another replica
// of the fleet holds is returned for what it asks (Request.Replica set);
// it cannot be waited for here.
func (b *Broker) Get(id string) *Pending {
	b.mu.Lock()
	p := b.pending[id]
	if p != nil && (b.now().Before(p.Deadline) || p.decided) {
		b.mu.Unlock()
		return p
	}
	b.mu.Unlock()
	if r, ok := b.other(id); ok {
		return &Pending{Request: r, b: b, done: make(chan Outcome, 1)}
	}
	return nil
}

// Wait blocks until the call is decided, its deadline passes (a denial on
// channel "timeout"), or ctx ends (a denial on channel "cancelled"). Either
// way the call is no longer held afterwards.
func (p *Pending) Wait(ctx context.Context) (o Outcome) {
	defer func() { p.b.forget(p.ID, o) }()
	timer := time.NewTimer(time.Until(p.Deadline))
	defer timer.Stop()
	select {
	case o := <-p.done:
		return o
	case <-timer.C:
		// An answer that raced the deadline still counts.
		select {
		case o := <-p.done:
			return o
		default:
		}
		return Outcome{Channel: ChannelTimeout, At: p.b.now(), Note: "no human answered before " + p.Deadline.UTC().Format(time.RFC3339)}
	case <-ctx.Done():
		return Outcome{Channel: ChannelCancelled, At: p.b.now(), Note: context.Cause(ctx).Error()}
	}
}

// Decide answers the held call id. The first answer wins; a later one, an
// answer after the deadline, or an unknown id is ErrUnknown. An answer
// that does not fit the request (text for a held call, an approval of a
// question without text, a secret too short to mask) is ErrBadAnswer and
// leaves the request waiting. The outcome's time is set here.
func (b *Broker) Decide(id string, o Outcome) error {
	b.mu.Lock()
	_, ok := b.pending[id]
	b.mu.Unlock()
	if !ok {
		return b.decideOther(id, o)
	}
	return b.decideHere(id, o, b.fleet != nil)
}

// DecideHere is Decide for a call this broker holds, and for no other: a
// fleet's answer given on another replica, taken by this one.
func (b *Broker) DecideHere(id string, o Outcome) error { return b.decideHere(id, o, false) }

// decideHere answers a call this broker holds; with claim, the fleet is
// asked first whether another replica's answer got there before.
func (b *Broker) decideHere(id string, o Outcome, claim bool) error {
	b.mu.Lock()
	p, ok := b.pending[id]
	if !ok || p.decided || !b.now().Before(p.Deadline) {
		b.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknown, id)
	}
	o, err := p.Request.fit(o)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if claim {
		if err := b.fleet.Claim(id, o); err != nil {
			return err
		}
	}
	b.mu.Lock()
	if p.decided {
		b.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknown, id)
	}
	p.decided = true
	b.mu.Unlock()
	o.At = b.now()
	p.done <- o
	return nil
}

// decideOther answers a call another replica of the fleet holds, once the
// answer fits its request; a secret answer stays on its replica.
func (b *Broker) decideOther(id string, o Outcome) error {
	r, ok := b.other(id)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknown, id)
	}
	o, err := r.fit(o)
	if err != nil {
		return err
	}
	if r.KeptSecret(o) {
		return fmt.Errorf("%w: answer question %s on replica %s (its console or its approvals socket)", ErrSecretStaysHere, id, r.Replica)
	}
	o.At = b.now()
	return b.fleet.Answer(r, o)
}

// Withdraw drops the held call id at once, answered or not: the call it
// belonged to will not run (the session moved on, or ended). A later
// Decide or Get finds nothing.
func (b *Broker) Withdraw(id string) {
	b.forget(id, Outcome{Channel: ChannelCancelled, At: b.now(), Note: "withdrawn: the call it held will not run (its session moved on, or ended)"})
}

// Answered reports whether the held call has an answer waiting.
func (p *Pending) Answered() bool {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.decided
}

// List returns the calls still waiting for an answer, oldest first: this
// broker's, and those the fleet's other replicas hold.
func (b *Broker) List() []Request {
	now := b.now()
	b.mu.Lock()
	out := make([]Request, 0, len(b.pending))
	for _, p := range b.pending {
		if !p.decided && now.Before(p.Deadline) {
			out = append(out, p.Request)
		}
	}
	b.mu.Unlock()
	if b.fleet != nil {
		out = append(out, b.fleet.Others()...)
	}
	slices.SortFunc(out, func(a, c Request) int { return a.Created.Compare(c.Created) })
	return out
}

func (b *Broker) forget(id string, o Outcome) {
	b.mu.Lock()
	_, held := b.pending[id]
	delete(b.pending, id)
	b.mu.Unlock()
	if held && b.fleet != nil {
		b.fleet.Closed(id, o)
	}
}

package cedar

import (
	"bytes"
	"encoding/json"
	"sync"

	cedargo "github.com/cedar-policy/cedar-go"
)

// The command index leaves out of a decision the policies that cannot
// match its command, so a large policy set costs a request only the
// policies that could apply to it. A policy is left out only when its
// first condition is a `when` whose leftmost conjunct compares
// resource.command with a string literal (`resource.command == "x" && …`,
// or `!=`) that the request's command does not satisfy: Cedar evaluates
// conditions in order and && from the left, stopping at the first false,
// and that comparison cannot fail (command is always a String), so the
// policy neither matches nor errors, and leaving it out changes nothing
// in the decision, its reasons or its errors. Every other policy is
// always evaluated.

// commandGuard is a policy's leading comparison of resource.command.
type commandGuard struct {
	command string
	equal   bool // == (else !=)
}

// admits reports whether a request with command can satisfy the guard.
func (g commandGuard) admits(command string) bool { return (command == g.command) == g.equal }

// commandIndex holds each policy's guard (absent: none) and the policy
// set for each command seen, built on first use.
type commandIndex struct {
	once   sync.Once
	guards map[cedargo.PolicyID]commandGuard
	sets   sync.Map // command -> *cedargo.PolicySet
	// approval are the policies that read resource.human_approved: the
	// only ones an approval could change the outcome of.
	approval map[cedargo.PolicyID]bool
}

// setFor is the policy set a request with command is decided on: every
// policy but those whose guard rules the command out.
func (e *Engine) setFor(command string) *cedargo.PolicySet {
	e.indexPolicies()
	if len(e.cmdIndex.guards) == 0 {
		return e.set
	}
	if s, ok := e.cmdIndex.sets.Load(command); ok {
		return s.(*cedargo.PolicySet)
	}
	s := cedargo.NewPolicySet()
	for id, p := range e.set.All() {
		if g, guarded := e.cmdIndex.guards[id]; !guarded || g.admits(command) {
			s.Add(id, p)
		}
	}
	// The commands a request may carry are the manifests' (a handful):
	// the cache stays small. An unknown one is built each time rather
	// than kept.
	if len(command) <= 64 {
		e.cmdIndex.sets.LoadOrStore(command, s)
	}
	return s
}

// indexPolicies reads each policy's command guard and whether it reads
// human_approved, once.
func (e *Engine) indexPolicies() {
	e.cmdIndex.once.Do(func() {
		e.cmdIndex.guards = map[cedargo.PolicyID]commandGuard{}
		e.cmdIndex.approval = map[cedargo.PolicyID]bool{}
		for id, p := range e.set.All() {
			data, err := p.MarshalJSON()
			if err != nil {
				e.cmdIndex.approval[id] = true // unreadable: no guard, and assume it reads human_approved
				continue
			}
			if g, ok := guardOf(data); ok {
				e.cmdIndex.guards[id] = g
			}
			if bytes.Contains(data, []byte(`"attr":"human_approved"`)) {
				e.cmdIndex.approval[id] = true
			}
		}
	})
}

// approvalCouldLift reports whether approving a request denied without
// errors could allow it: every forbid that matched reads human_approved
// (one that does not would match again), and, for a denial by no permit
// at all, some permit of the set reads it.
func (e *Engine) approvalCouldLift(set *cedargo.PolicySet, diag cedargo.Diagnostic) bool {
	e.indexPolicies()
	if len(diag.Reasons) > 0 {
		for _, r := range diag.Reasons {
			if !e.cmdIndex.approval[r.PolicyID] {
				return false
			}
		}
		return true
	}
	for id, p := range set.All() {
		if p.Effect() == cedargo.Permit && e.cmdIndex.approval[id] {
			return true
		}
	}
	return false
}

// guardOf reads a policy's leading comparison of resource.command from its
// JSON form (data: Cedar's policy format).
func guardOf(data []byte) (commandGuard, bool) {
	var doc struct {
		Conditions []struct {
			Kind string          `json:"kind"`
			Body json.RawMessage `json:"body"`
		} `json:"conditions"`
	}
	if json.Unmarshal(data, &doc) != nil || len(doc.Conditions) == 0 || doc.Conditions[0].Kind != "when" {
		return commandGuard{}, false
	}
	node := doc.Conditions[0].Body
	for {
		// The leftmost operand of an && chain (left-associative).
		var and struct {
			And *struct {
				Left json.RawMessage `json:"left"`
			} `json:"&&"`
		}
		if json.Unmarshal(node, &and) != nil || and.And == nil {
			break
		}
		node = and.And.Left
	}
	var cmp struct {
		Eq *operands `json:"=="`
		Ne *operands `json:"!="`
	}
	if json.Unmarshal(node, &cmp) != nil {
		return commandGuard{}, false
	}
	ops, equal := cmp.Eq, true
	if ops == nil {
		ops, equal = cmp.Ne, false
	}
	if ops == nil {
		return commandGuard{}, false
	}
	cmd, ok := ops.commandLiteral()
	return commandGuard{command: cmd, equal: equal}, ok
}

// operands are the two sides of a comparison in Cedar's JSON form.
type operands struct {
	Left  json.RawMessage `json:"left"`
	Right json.RawMessage `json:"right"`
}

// commandLiteral is the string literal a comparison sets against
// resource.command (either side).
func (o *operands) commandLiteral() (string, bool) {
	if isResourceCommand(o.Left) {
		return stringLiteral(o.Right)
	}
	if isResourceCommand(o.Right) {
		return stringLiteral(o.Left)
	}
	return "", false
}

func isResourceCommand(n json.RawMessage) bool {
	var attr struct {
		Dot *struct {
			Left json.RawMessage `json:"left"`
			Attr string          `json:"attr"`
		} `json:"."`
	}
	if json.Unmarshal(n, &attr) != nil || attr.Dot == nil || attr.Dot.Attr != "command" {
		return false
	}
	var v struct {
		Var string `json:"Var"`
	}
	return json.Unmarshal(attr.Dot.Left, &v) == nil && v.Var == "resource"
}

func stringLiteral(n json.RawMessage) (string, bool) {
	var v struct {
		Value json.RawMessage `json:"Value"`
	}
	if json.Unmarshal(n, &v) != nil || v.Value == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(v.Value, &s) != nil {
		return "", false // a number, a record, an entity: not a command
	}
	return s, true
}

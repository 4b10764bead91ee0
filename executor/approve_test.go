package executor

import (
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"

	"fmt"
	"testing"

	"github.com/browsergate/browsergate/approval"
)

// TestSealedState: the request state of a two-round approval opens only
// for the session it was issued to, and not at all when altered.
func TestSealedState(t *testing.T) {
	e := &Executor{}
	copy(e.stateKey[:], "0123456789abcdef0123456789abcdef")
	state := e.seal("apr-1", "s-1")
	if id, ok := e.unseal(state, "s-1"); !ok || id != "apr-1" {
		t.Fatalf("unseal(own state) = %q, %v", id, ok)
	}
	for name, bad := range map[string]string{
		"other session": state, // checked against s-2 below
		"other id":      "apr-2" + state[len("apr-1"):],
		"no mac":        "apr-1",
		"empty mac":     "apr-1.",
		"garbage":       "apr-1.!!!",
		"empty":         "",
	} {
		session := "s-1"
		if name == "other session" {
			session = "s-2"
		}
		if _, ok := e.unseal(bad, session); ok {
			t.Errorf("%s: state %q opened", name, bad)
		}
	}
	other := &Executor{}
	if _, ok := other.unseal(state, "s-1"); ok {
		t.Error("a state opened under another daemon's key")
	}
}

// TestSameCall: an approval covers one action: same session, tool,
// command, page and arguments.
func TestSameCall(t *testing.T) {
	e := &Executor{}
	base := approval.Request{Session: "s", Tool: "t.submit_form", Command: "submit_form", Page: "http://a/", URL: "http://a/post",
		Args: map[string]any{"ref": "e3"}, Fingerprint: e.fingerprint(map[string]any{"ref": "e3"})}
	if !sameCall(base, base) {
		t.Fatal("a call differs from itself")
	}
	for name, change := range map[string]func(*approval.Request){
		"session":     func(r *approval.Request) { r.Session = "s2" },
		"tool":        func(r *approval.Request) { r.Tool = "t.click" },
		"command":     func(r *approval.Request) { r.Command = "click" },
		"page":        func(r *approval.Request) { r.Page = "http://b/" },
		"destination": func(r *approval.Request) { r.URL = "http://b/post" },
		"args":        func(r *approval.Request) { r.Fingerprint = e.fingerprint(map[string]any{"ref": "e4"}) },
		"no args":     func(r *approval.Request) { r.Fingerprint = e.fingerprint(nil) },
	} {
		other := base
		change(&other)
		if sameCall(base, other) {
			t.Errorf("a call with another %s counts as the same", name)
		}
	}
}

// TestFingerprintSeesMaskedText: two passwords of the same length look the
// same once masked, but their fingerprints differ, so an approval for one
// does not cover the other.
func TestFingerprintSeesMaskedText(t *testing.T) {
	a := &turn{call: &toolclad.Call{Args: map[string]any{"text": "hunter22"}}, verdict: gate.Verdict{Masked: true}}
	b := &turn{call: &toolclad.Call{Args: map[string]any{"text": "letmein!"}}, verdict: gate.Verdict{Masked: true}}
	if fmt.Sprint(a.recordedArgs()) != fmt.Sprint(b.recordedArgs()) {
		t.Fatalf("masked args differ: %v %v", a.recordedArgs(), b.recordedArgs())
	}
	e := &Executor{}
	if e.fingerprint(a.call.Args) == e.fingerprint(b.call.Args) {
		t.Error("two different passwords have the same fingerprint")
	}
}

package executor

import (
	"fmt"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// A navigate outside allowed_domains that a human approved
// ([browser.scope] ask_external; gate/outside.go says what an approval
// does) opens its origin to the session's pages for the rest of the
// session: every judge of the session's URLs — the decision, the check
// after each action, request interception, the session's egress proxy,
// the downloads — reads the scope through s.check, which lifts the
// scope's askable refusals of exactly those origins. The backend's check
// (the manifest's scope, shared by every session of it) is unchanged, and
// so is every other session.

// check judges one URL for the session: the backend's scope and the
// daemon's own endpoints, and the origins a human approved for it.
func (s *session) check(u string) scope.Verdict {
	v := s.egress.outside.Check(s.backend.check)(u)
	if v.Allowed && v.Ask && v.Port != 0 {
		// Lifted by an approval: the daemon's own endpoints, which the
		// backend's check judges only of what the scope allowed, are
		// refused still.
		if deny, ok := s.backend.listeners.hostVerdict(v.Host, v.Port); ok {
			return deny
		}
	}
	return v
}

// admitOutside makes the origin of an approved navigate outside
// allowed_domains reachable for the session, before the navigate acts: its
// document and subresources are judged by s.check from the first request.
// Only a call the gate held for that reason, decided again with the
// approval and allowed, gets here (runTurn, after approve).
//
// It takes the verdict and the approval rather than the turn, so that the
// session's files need not reach the loop's (cmd/knots).
func (s *session) admitOutside(v *gate.Verdict, a *evidence.Approval) {
	o := v.Outside
	if o == nil || a == nil || !a.Approved {
		return
	}
	s.egress.outside.Add(o.Origin, a.ID)
	// The record says what the approval left behind.
	v.ScopeRule = fmt.Sprintf("%s: held for a human; approval %s admitted %s for the session", v.ScopeRule, a.ID, o.Origin)
	s.backend.logger.Warn("origin outside allowed_domains admitted for the session", "session", s.id, "origin", o.Origin.String(),
		"url", s.masker.Load().Mask(o.URL), "approval", a.ID, "by", a.By)
}

// askNote tells the agent, when the egress gate refused a request to a
// host outside allowed_domains that it could ask a human for (a redirect
// or a link that left the scope as the call ran), how to ask: with
// navigate. Nothing when the manifest does not ask (gate.AsksOutside).
func askNote(m *toolclad.Manifest, blocked []Blocked) string {
	if !gate.AsksOutside(m) {
		return ""
	}
	for _, b := range blocked {
		if b.Ask {
			return "\n[a refused request went outside allowed_domains: a human can be asked for such a page; call navigate with its URL and it waits for an approval ([browser.scope] ask_external)]"
		}
	}
	return ""
}

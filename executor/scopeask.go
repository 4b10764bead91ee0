package executor

import (
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/approval"

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
// approval and allowed, gets here (runTurn, after approve); held is what
// the first decision held it for, v the decision after the approval.
// Anything but an admission the operator gave for that very origin
// refuses the call (admission), and nothing is opened.
//
// It takes the verdicts and the approval rather than the turn, so that the
// session's files need not reach the loop's (cmd/knots).
func (s *session) admitOutside(v *gate.Verdict, held *gate.Outside, a *evidence.Approval) *DenyError {
	if v.Outside == nil {
		// Nothing outside allowed_domains to open (the URL may have come
		// inside the scope since it was held, by a reload of the
		// manifest: the call then runs as any call in scope).
		return nil
	}
	if d := admission(v.Outside, held, a); d != nil {
		return d
	}
	o := v.Outside
	// An approval of http://H also opens https://H, where Chromium's own
	// upgrade takes the navigate (gate.AdmittedOrigins).
	admitted := gate.AdmittedOrigins(o.Origin)
	names := make([]string, len(admitted))
	for i, origin := range admitted {
		s.egress.outside.Add(origin, a.ID)
		names[i] = origin.String()
	}
	// The record says what the approval left behind.
	v.ScopeRule = fmt.Sprintf("%s: held for a human; approval %s admitted %s for the session", v.ScopeRule, a.ID, strings.Join(names, " and "))
	s.backend.logger.Warn("origin outside allowed_domains admitted for the session", "session", s.id, "origin", strings.Join(names, " "),
		"url", s.masker.Load().Mask(o.URL), "approval", a.ID, "by", a.By, "channel", a.Channel)
	return nil
}

// admission refuses to open an origin outside allowed_domains unless a
// approved it through a channel only the operator answers and the call,
// decided again after the approval (now), leaves the scope for the very
// origin the human was asked about (held). Leaving the scope widens what
// every later page of the session reaches: the MCP client, which is the
// agent's side of the connection, never decides it, and neither does an
// approval given for something else (a call held for its risk tier, whose
// URL is outside only when decided again).
func admission(now, held *gate.Outside, a *evidence.Approval) *DenyError {
	switch {
	case a == nil || !a.Approved:
		return deny(evidence.StageApproval, "outside the scope",
			"a navigate outside allowed_domains runs only when a human approved it, and no approval was given; nothing was done")
	case !admitsOutside(a.Channel):
		return deny(evidence.StageApproval, "outside the scope",
			"approval %s came via %s, and a navigate outside allowed_domains is decided by the operator only (browsergate approvals, or the console); nothing was done", a.ID, a.Channel)
	case held == nil:
		return deny(evidence.StageApproval, "call changed",
			"approval %s was not asked for leaving the scope, but decided again the navigate goes to %s, outside allowed_domains; nothing was done", a.ID, now.URL)
	case now.Origin != held.Origin:
		return deny(evidence.StageApproval, "call changed",
			"approval %s was given to open %s, but decided again the navigate would open %s; nothing was done", a.ID, held.Origin, now.Origin)
	}
	return nil
}

// admitsOutside reports whether an approval given through channel may open
// an origin outside allowed_domains: the operator's (browsergate approvals
// and the console), and a replay answering as such an approval was
// recorded.
func admitsOutside(channel string) bool {
	switch channel {
	case approval.ChannelOperator, approval.ChannelConsole, approval.ChannelReplay:
		return true
	}
	return false
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

package executor

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
)

// TestOutsideAdmissionOnlyByTheOperatorForTheHeldOrigin: an origin outside
// allowed_domains is opened only by an approval given through the
// operator's channels (browsergate approvals, the console) or a replay of
// one, and only when the call decided again leaves the scope for the
// origin the human was asked about; an approval via the MCP client's
// elicitation, one not given, one asked for something else and one for
// another origin are refused at stage approval.
func TestOutsideAdmissionOnlyByTheOperatorForTheHeldOrigin(t *testing.T) {
	t.Parallel()
	outside := func(u string) *gate.Outside {
		o, err := scope.OriginOf(u)
		if err != nil {
			t.Fatal(err)
		}
		return &gate.Outside{URL: u, Origin: o}
	}
	news, other := outside("https://news.example.org/a"), outside("https://other.example.org/")
	approved := func(channel string) *evidence.Approval {
		return &evidence.Approval{ID: "apr-1", Approved: true, Channel: channel, By: "alice"}
	}
	for _, channel := range []string{approval.ChannelOperator, approval.ChannelConsole, approval.ChannelReplay} {
		if d := admission(news, outside("https://news.example.org/b"), approved(channel)); d != nil {
			t.Errorf("approved via %s for the held origin: refused %v", channel, d)
		}
	}
	for name, tc := range map[string]struct {
		now, held *gate.Outside
		a         *evidence.Approval
		rule      string
		want      string
	}{
		"via elicitation":     {news, news, approved(approval.ChannelElicitation), "outside the scope", "via elicitation"},
		"via an unknown way":  {news, news, approved("hook"), "outside the scope", "decided by the operator only"},
		"no approval":         {news, news, nil, "outside the scope", "no approval was given"},
		"denied":              {news, news, &evidence.Approval{ID: "apr-1", Channel: approval.ChannelOperator}, "outside the scope", "no approval was given"},
		"held for other":      {news, nil, approved(approval.ChannelOperator), "call changed", "was not asked for leaving the scope"},
		"another origin":      {other, news, approved(approval.ChannelOperator), "call changed", "would open https://other.example.org:443"},
		"another scheme/port": {outside("http://news.example.org/a"), news, approved(approval.ChannelOperator), "call changed", "http://news.example.org:80"},
	} {
		d := admission(tc.now, tc.held, tc.a)
		if d == nil {
			t.Errorf("%s: admitted", name)
			continue
		}
		if d.Stage != evidence.StageApproval || d.Rule != tc.rule || !strings.Contains(pagetext.Unmarked(d.Reason), tc.want) || !strings.Contains(d.Reason, "nothing was done") {
			t.Errorf("%s: %s %q %q; want stage approval, rule %q, reason with %q", name, d.Stage, d.Rule, d.Reason, tc.rule, tc.want)
		}
	}
}

package executor

import (
	"context"
	"strings"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// The decision on the downloads a session's pages start by themselves (a
// link, a script, a blob or a data: URL). Each is decided by decide, the
// decision every call takes, as a call of the download command about the
// download's URL would be: the manifest must declare download, the URL
// must fit the command's url argument and the scope, Cedar must allow
// resource.command "download" with resource.url that URL, and a human must
// approve it when the manifest or a policy asks for one. Each is recorded
// on its own (kind page_download), linked to the call it began in.

// pageBytes reports whether a download's URL names bytes the page made
// itself (blob:, data:), which no request fetches.
func pageBytes(u string) bool { return hasScheme(u, "blob:") || hasScheme(u, "data:") }

// downloadCheck is the scope check of a page's download: a blob: URL is
// judged by the origin that made it (the URL inside it), a data: URL by
// the document that started the download (page), any other URL as itself.
func downloadCheck(check gate.URLCheck, page string) gate.URLCheck {
	return func(u string) scope.Verdict {
		switch {
		case hasScheme(u, "blob:"):
			return check(u[len("blob:"):])
		case hasScheme(u, "data:"):
			if page == "" {
				return scope.Verdict{Rule: "data: download", Reason: "the document that made the data: URL is not known"}
			}
			return check(page)
		}
		return check(u)
	}
}

// pageDownloadCall is a page's download as a call of the download command
// (Command nil when the manifest does not declare it). Its url argument is
// checked as the command's would be; a blob: or data: URL, which is no
// request, is taken as it is (its scope is its origin's or its page's).
func pageDownloadCall(s *session, shown string, groups []string) *toolclad.Call {
	m := s.manifest
	raw := map[string]any{"url": shown}
	c := &toolclad.Call{Manifest: m, Command: m.Command("download"), Tool: m.Tool.Name + ".download", SessionID: s.mcpID,
		Agent: s.agentID, Groups: groups, RawArgs: raw, Progress: func(string) {}}
	switch {
	case c.Command == nil:
	case pageBytes(shown):
		c.Args = raw
	default:
		c.Args, c.ArgErr = c.Command.Validate(raw)
	}
	return c
}

// downloadPageState is the state of the page a download began in, as the
// gate knows it without asking the page (which may be mid-action): its
// URL as the browser reported the frame's document committed, and its
// domain; what only the page could tell is taken on the cautious side, as
// for a page that cannot be read (authenticated, with forms). An unknown
// document leaves the URL empty, which the gate refuses.
func downloadPageState(page string) PageState {
	st := PageState{URL: page, HasForms: true, IsAuthenticated: true}
	if u, err := scope.ParseURL(page); err == nil {
		st.Domain = u.Host
	}
	return st
}

// judgePageDownload decides a download a page of the session's started:
// decide, and, when it needs a human, the approval (asking tells the
// downloads it waits; ctx ends the wait with the session or the
// download), then decide again with human_approved = true. The turn holds
// the answer: deny set when it is refused.
func (e *Executor) judgePageDownload(ctx context.Context, s *session, dl *download, asking func(id string)) *turn {
	view := s.downloads.currentView()
	t := &turn{start: e.cfg.Now(), begun: time.Now(), call: pageDownloadCall(s, dl.shown, view.groups)}
	if t.call.Command == nil {
		t.deny = deny(evidence.StageManifest, "download not declared", "the manifest does not declare download")
		return t
	}
	t.facts = &facts{State: downloadPageState(dl.page)}
	if s.manifest.Browser.Remote != nil {
		// The browser would save the file on the pool host, where the
		// daemon cannot take it into download_dir.
		t.deny = deny(evidence.StageManifest, RuleRemoteDownload, "a download a page starts by itself in a browser on a pool host is not fetched back to this host yet: the download command fetches a URL of the scope from here, with the browser's cookies")
		return t
	}
	judge := func(approved bool) {
		q := e.question(s, t, t.facts, approved)
		q.Limits, q.Check, q.Now = &view.limits, downloadCheck(q.Check, dl.page), e.cfg.Now()
		t.verdict = gate.Decide(q)
		t.deny = t.verdict.Deny
	}
	judge(false)
	if t.deny != nil || len(t.verdict.Approval) == 0 {
		return t
	}
	why := t.verdict.Approval
	if e.cfg.Approvals == nil {
		t.deny = deny(evidence.StageApproval, "human_approval", "%s, and no approval channel is configured on this daemon", strings.Join(why, "; "))
		return t
	}
	want := e.approvalRequest(s, t)
	want.Why = append([]string{"a download the page started by itself, not a call of the agent's"}, want.Why...)
	p := e.openApproval(s, want, "a page's download held for human approval")
	asking(p.ID)
	o := p.Wait(ctx)
	t.approval = e.answered(s, p, o)
	if !o.Approved {
		t.deny = e.notApproved(p, o, why)
		return t
	}
	judge(true)
	return t
}

// RuleRemoteDownload refuses a download a page starts by itself in a
// browser on a pool host.
const RuleRemoteDownload = "remote page download"

// refusal is why the gate refused the page's download the turn judged
// (downloadAnswer), nil when it allowed it.
func (t *turn) refusal() *DenyError { return t.deny }

// recordPageDownload writes an ended download's evidence record: the
// gate's decision (or the refusal that ended it after the gate), the file
// as saved or refused, and the call it began in.
func (e *Executor) recordPageDownload(s *session, dl *download) {
	var c turn
	if t, ok := dl.answer.(*turn); ok && t != nil {
		c = *t
	}
	if c.call == nil {
		c.call = pageDownloadCall(s, dl.shown, nil)
	}
	if c.start.IsZero() {
		c.start, c.begun = e.cfg.Now(), time.Now()
	}
	c.deny = dl.refused
	c.out = output{Files: []evidence.FileRef{dl.file},
		Text: strings.TrimPrefix(downloadNote([]downloadNews{{file: dl.file, refused: dl.refused}}, noteValue), "\n")}
	maskTurn(&c, s.turnMasks(&c, true))
	env := &evidence.Envelope{
		Kind:           evidence.KindPageDownload,
		Session:        s.id,
		Time:           c.start.UTC(),
		Principal:      s.principal,
		Tool:           s.manifest.Tool.Name,
		Command:        "download",
		Args:           e.shownArgs(s, &c),
		Decision:       c.decision(),
		Output:         c.out.Text,
		DurationMicros: e.cfg.Now().Sub(c.start).Microseconds(),
		Files:          maskFiles(c.out.Files, s.masker.Load()),
		CallSeq:        dl.callSeq,
		BetweenCalls:   dl.between,
	}
	if c.facts != nil {
		env.Before = c.facts.State.Map()
	}
	err := e.cfg.Evidence.Append(env, nil)
	e.logDecision(s, &c, env.Decision, err)
	e.publishDecision(s, env)
}

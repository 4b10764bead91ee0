package executor

import (
	"github.com/browsergate/browsergate/scope"
)

// Secrets (the manifest's [secrets.<NAME>] tables) never reach the agent
// or the record. The agent types the placeholder <NAME>; the value is put
// in only as the text is dispatched, only into an element named by ref or
// selector, and only when that element's page is on one of the secret's
// domains. Everything browsergate hands back or writes — tool results,
// snapshots, extracted HTML, page state, blocked-request lists, evidence
// envelopes, approval questions and log lines — goes through a masker that
// replaces the value, and every run of six or more of its characters, in
// any mix of URL, HTML and string escapes, UTF-8 or windows-1252, and in
// either case, with [secret NAME] ([part of secret NAME]). Screenshots are
// pixels: a page that shows a secret in clear text shows it in its
// screenshot too.
//
// The rules a secret is typed, attached and sent by are package gate's
// (gate.Secrets); the masking is package mask's (mask.Masker); which
// secrets a page is considered to hold is maskscope.go's.

// hostOf is the host of a URL as Chromium reads it ("" when it has none).
func hostOf(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

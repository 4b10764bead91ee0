package executor

// freeContinuation says whether the call, though it passed the limits,
// may go uncounted toward max_interactions: it ran, without an error, and
// only handed out a page further on in a reply the agent already had, in
// the same tab and document, that the reply had free (nextPage,
// gate.Reading). Cedar decided it with the count as it stood, and its
// record carries that count unchanged. A refused or failed continuation
// counts, as every other call does, so a continuation is never a way to
// call without end; and so does one whose reply or record carries
// anything beyond the stored page — a note the page's doings added since
// the last call (a dialog answered, a request refused, a permission
// granted, a download) or the session's notice (notice, said once in
// this reply) — for that is news from the page, not text already taken.
// The session bounds the free ones as well (gate.Limits.TakeContinuation).
func (t *turn) freeContinuation(notice string) bool {
	c := t.out.continued
	if c == nil || t.deny != nil || t.err != nil {
		return false
	}
	return t.out.Text == c.text && len(t.out.Files) == 0 && notice == "" &&
		len(t.blocked) == 0 && t.dropped.total() == 0 &&
		len(t.granted.list) == 0 && t.granted.dropped == 0
}

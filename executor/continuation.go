package executor

// freeContinuation says whether the call, though it passed the limits,
// does not count toward max_interactions: it ran, without an error, and
// only handed out a page further on in a reply the agent already had, in
// the same tab and document (nextPage, gate.Reading). Cedar decided it
// with the count as it stood, and its record carries that count unchanged.
// A refused or failed continuation counts, as every other call does, so a
// continuation is never a way to call without end.
func (t *turn) freeContinuation() bool {
	return t.out.continued && t.deny == nil && t.err == nil
}

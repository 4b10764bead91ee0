package gate

// Reading is how far the agent has read one reply that came in pages (a
// snapshot or a read too long for one reply), kept by the executor with
// the tab and the document it is of. It holds the rule by which a
// continuation does not use up max_interactions: handing out a page
// further on in the same kept reply is free, so reading a long page in
// four pages costs one interaction, not four. Anything else counts — the
// same page again, an earlier one, a page the reply does not have, a
// reply of another document or tab (the executor refuses those
// continuations, and a refusal counts) — and so does a forward page once
// the reply's free pages are used up.
//
// A reply's free pages are not its pages after the first: how many pages
// a reply has is the page's text (the page chooses it) over the agent's
// max_chars (the agent chooses it, down to 1000), so that a small
// max_chars would make a long page a source of hundreds of free calls.
// They are the pages the reply would have at the default page size
// (FreePages), whatever page size the agent asked for. The session
// bounds them as well (Limits.TakeContinuation).
type Reading struct {
	Pages int // the pages the reply has
	Given int // the furthest page handed out (the reply itself gave page 1)
	Free  int // the forward pages still free
}

// NewReading is the reading of a reply of pages pages whose first page
// has just been handed out, of which free pages further on may be handed
// out free (FreePages; never more than the reply has after its first).
func NewReading(pages, free int) Reading {
	return Reading{Pages: pages, Given: 1, Free: max(0, min(free, pages-1))}
}

// FreePages is how many continuations of a reply of textLen bytes are
// free when its default page size is defaultPage bytes: the pages it
// would have at that size, less the first (ceil(textLen / defaultPage) -
// 1). A text that fits one default page gives none.
func FreePages(textLen, defaultPage int) int {
	if textLen <= 0 || defaultPage <= 0 {
		return 0
	}
	return (textLen+defaultPage-1)/defaultPage - 1
}

// Advance hands out page n: it reports whether that is a free
// continuation — n is further on than any page given, one the reply has,
// and the reply has a free page left — and remembers how far the agent
// has read whenever n moves forward, free or not.
func (r *Reading) Advance(n int) bool {
	if n <= r.Given || n > r.Pages {
		return false
	}
	r.Given = n
	if r.Free <= 0 {
		return false
	}
	r.Free--
	return true
}

package gate

// Reading is how far the agent has read one reply that came in pages (a
// snapshot or a read too long for one reply), kept by the executor with
// the tab and the document it is of. It holds the rule by which a
// continuation does not use up max_interactions: handing out a page
// further on in the same kept reply is free, so reading a long page in
// four pages costs one interaction, not four. Anything else counts — the
// same page again, an earlier one, a page the reply does not have, a
// reply of another document or tab (the executor refuses those
// continuations, and a refusal counts) — so the free calls of one reply
// are at most its pages after the first, and each new reply is itself a
// counted call. A free continuation only hands out text already taken
// from the page: it reads nothing new from it.
type Reading struct {
	Pages int // the pages the reply has
	Given int // the furthest page handed out (the reply itself gave page 1)
}

// NewReading is the reading of a reply of pages pages whose first page
// has just been handed out.
func NewReading(pages int) Reading { return Reading{Pages: pages, Given: 1} }

// Advance hands out page n: it reports whether that moves forward through
// the reply (n is further on than any page given, and one it has), and
// remembers how far the agent has read when it does. Only a forward page
// is a free continuation.
func (r *Reading) Advance(n int) bool {
	if n <= r.Given || n > r.Pages {
		return false
	}
	r.Given = n
	return true
}

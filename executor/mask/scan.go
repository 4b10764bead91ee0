package mask

import (
	"slices"
	"unicode/utf8"
)

// MinPart is the shortest run of a secret's characters that is masked on
// its own, as [part of secret NAME]. (A manifest refuses a value shorter
// than this: it could not be masked reliably.)
const MinPart = 6

// A run is the spellings of consecutive characters of a secret form
// that begin at byte start of a text with character k of form: as many as
// n characters, reaching as far as byte end. (Two spellings of one
// character may begin at one byte, & and &amp;: the most characters and
// the furthest end may come by different ones, and masking up to that end
// masks every run from start.)
type run struct{ form, k, n, start, end int }

// Spans are where in s the runs Mask would replace are, as [start, end)
// byte offsets: what a text cut into pages must not cut through.
func (m *Masker) Spans(s string) [][2]int {
	if m == nil || s == "" {
		return nil
	}
	var out [][2]int
	for _, r := range m.runs(s) {
		out = append(out, [2]int{r.start, r.end})
	}
	return out
}

// runs are the runs of MinPart or more characters in s, leftmost-longest
// and apart, as a regular expression would find them (regexp.Longest).
func (m *Masker) runs(s string) []run { return m.scan(s, false) }

// scan finds the runs of MinPart or more characters in s: leftmost-longest
// and apart (runs), or with every, the longest of each form and character
// from every byte (the pieces a text holds, Note).
// A run lies within a stretch of s whose every byte belongs to a spelling
// of some secret character: most text has no such stretch long enough to
// hold one, and only those that are long enough are searched (runsIn).
func (m *Masker) scan(s string, every bool) []run {
	var out []run
	var w runsWork
	w.every = every
	var sp []spelled
	lo, hi := -1, -1 // the stretch so far, s[lo:hi]
	// While the stretch is raw ASCII (simple), chain counts the pairs of
	// consecutive characters of a form in a row that end at p, and most
	// is the most: a run needs MinPart-1.
	simple, chain, most := true, 0, 0
	for p := 0; p <= len(s); p++ {
		end := -1 // where the spellings of secret characters at p end
		switch {
		case p == len(s):
		case s[p] < utf8.RuneSelf && s[p] != '%' && s[p] != '&' && s[p] != '\\' && s[p] != '+' && m.multi == nil:
			if m.ascii[s[p]] != nil { // the common case, quickly
				end = p + 1
				if lo >= 0 && s[p-1] < utf8.RuneSelf && m.pairs[s[p-1]][s[p]] {
					chain++
					most = max(most, chain)
				} else {
					chain = 0
				}
			}
		case charStart(s, p):
			simple = false
			sp = m.spellingsAt(s, p, sp[:0])
			for _, x := range sp {
				if m.where(x.c) != nil {
					end = max(end, p+x.w)
				}
			}
		}
		if end > p {
			if lo < 0 {
				lo = p
			}
			hi = max(hi, end)
		} else if lo >= 0 && p >= hi { // byte p is in no such spelling: the stretch ended
			if hi-lo >= MinPart && (!simple || most >= MinPart-1) {
				out = m.runsIn(s[:hi], lo, out, &w)
			}
			lo, simple, chain, most = -1, true, 0, 0
		} else if lo < 0 {
			simple = true
		}
	}
	return out
}

// charStart says whether a character may be spelled from byte p of s:
// the first byte of a UTF-8 sequence, or a byte that is no part of one (a
// windows-1252 page's text read as bytes).
func charStart(s string, p int) bool {
	if utf8.RuneStart(s[p]) {
		return true
	}
	for q := p - 1; q >= 0 && q >= p-(utf8.UTFMax-1); q-- {
		if utf8.RuneStart(s[q]) {
			c, w := utf8.DecodeRuneInString(s[q:])
			return (c == utf8.RuneError && w <= 1) || q+w <= p
		}
	}
	return true
}

// runsWork is what runsIn works in, kept from one stretch to the next.
type runsWork struct {
	near  [maxSpelling][]run // near[p%maxSpelling]: the runs from byte p, one per form and character
	found []run              // the longest run of MinPart or more from each byte that has one, last first
	sp    []spelled
	every bool // every run of MinPart or more from each byte, of each form and character (scan)
}

// runsIn appends to out the runs from bytes lo and on of s.
//
// It goes through s backwards, once: the runs from byte p at character k
// of a form are a spelling of that character at p followed by the run
// from where the spelling ends at character k+1, which was worked out
// already. Only the runs from the last maxSpelling bytes are kept (a
// spelling is shorter), so the time is linear in s and the memory
// bounded.
func (m *Masker) runsIn(s string, lo int, out []run, w *runsWork) []run {
	near, found, sp := &w.near, w.found[:0], w.sp
	for p := len(s) - 1; p >= lo; p-- {
		here := near[p%maxSpelling][:0]
		if charStart(s, p) {
			sp = m.spellingsAt(s, p, sp[:0])
			for _, x := range sp {
				for _, at := range m.where(x.c) {
					r := run{form: at.form, k: at.k, n: 1, start: p, end: p + x.w}
					if r.end < len(s) && at.k+1 < len(m.forms[at.form].chars) {
						for _, next := range near[r.end%maxSpelling] {
							if next.form == at.form && next.k == at.k+1 {
								r.n, r.end = next.n+1, next.end
								break
							}
						}
					}
					if i := slices.IndexFunc(here, func(o run) bool { return o.form == r.form && o.k == r.k }); i >= 0 {
						here[i].n, here[i].end = max(here[i].n, r.n), max(here[i].end, r.end)
					} else {
						here = append(here, r)
					}
				}
			}
			if w.every {
				for _, r := range here {
					if r.n >= MinPart {
						out = append(out, r)
					}
				}
			}
			var best run
			for _, r := range here {
				if r.n >= MinPart && (r.end > best.end || r.end == best.end && r.n > best.n) {
					best = r
				}
			}
			if best.n > 0 {
				found = append(found, best)
			}
		}
		near[p%maxSpelling] = here
	}
	w.found, w.sp = found, sp
	if w.every {
		return out
	}
	// Leftmost first, apart: a run that starts inside the one before is
	// left out (what of it is past that one's end and long enough is
	// found again from there).
	start := len(out)
	for i := len(found) - 1; i >= 0; i-- {
		if len(out) == start || found[i].start >= out[len(out)-1].end {
			out = append(out, found[i])
		}
	}
	return out
}

// maxSpelling is longer, in bytes, than any spelling spellingsAt reads:
// a four-byte character percent-encoded twice (%25F0%259F%2598%2580) is
// 20.
const maxSpelling = 24

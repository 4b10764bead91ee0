package executor

import (
	"strings"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
)

// What every command's act is given and gives back — the facts observe
// read, the output — and how the page's own strings are written into
// browsergate's own lines (inert). Nothing here touches the browser.

// inert renders a string the page chose — its title or URL, a URL it
// requested or keeps in its history, a dialog's message, an exception's
// text — for browsergate's own lines, outside the fence (the state line,
// refusals, errors, notices): '[' and ']' become \x5b and \x5d, and each
// line break (\n, \r, \v, \f, U+0085, U+2028, U+2029) its backslash
// escape. So nothing the page writes can spell one of browsergate's
// markers ([state], [END PAGE CONTENT …], [egress gate …], …) or start a
// line: the only brackets and line breaks in those lines are
// browsergate's own. The escapes are Go's (and JavaScript's), so a quoted
// value stays a Go string literal that unquotes to the page's exact text;
// the structured content keeps the values as they are. It maps each
// character on its own, so a secret's value in a page's text reads
// inert(value) where it is made inert before the masker runs (a dialog's
// message, the URL go_back returned to, where a form was submitted): a
// spelling the masker knows (TestMaskerSeesInertValues). Where the masker ran first
// (the state line, a refusal, an error and the egress note are built from
// the masked turn), its [secret NAME] reads \x5bsecret NAME\x5d, since
// the page could have written that text too.
func inert(s string) string {
	return inertChars.Replace(s)
}

// inertChars are the characters inert escapes, with their escapes.
var inertChars = strings.NewReplacer(
	"[", `\x5b`, "]", `\x5d`,
	"\n", `\n`, "\r", `\r`, "\v", `\v`, "\f", `\f`,
	"\u0085", `\u0085`, "\u2028", `\u2028`, "\u2029", `\u2029`,
)

// facts are everything the decision on one call needs to know of the
// browser (gate.Facts), read by observe from sources the page cannot forge
// (CDP domains and the isolated world, never the page's own world).
// A fact that could not be read is recorded as an error: the gate refuses
// what it cannot judge. Every act of the command table is given them.
type facts = gate.Facts

// output is what a command produced: text for the agent and the evidence,
// and an optional image (a screenshot) of MIME type ImageType.
type output struct {
	Text      string
	Image     []byte
	ImageType string
	// Structured is the command's own structured content, beside the
	// state (list_tabs: tabs).
	Structured map[string]any
	// Files are the files the call uploaded or downloaded, for the
	// evidence.
	Files []evidence.FileRef
	// Recording is what the command recorded for the evidence beyond the
	// screencast (performance_trace: its trace), named by the record.
	Recording []evidence.RecordingRef
	// reportStatus: the reply adds, to Text's first line, the HTTP status
	// of the document the command committed, from the read after the
	// action (navigate; withStatus).
	reportStatus bool
	// asked is the URL navigate was asked for: where the tab landed is
	// reported when it is elsewhere (withLanding).
	asked string
	// continued: the call handed out a page further on in a reply kept
	// in pages (nextPage) that the reply had free, which does not count
	// toward max_interactions (freeContinuation); nil otherwise.
	continued *continuation
	// notes are browsergate's own lines about the output (where a paged
	// reply is), written after the page content's fence (reply), where the
	// page cannot reach, and kept in the record after Text.
	notes string
}

// origin is scheme://host[:port] of a URL, used to shorten same-origin
// links in snapshots.
func origin(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}

// collapse folds every run of white space in s to one space, and trims it.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes, at a character boundary, with an
// ellipsis where it cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isRuneStart reports whether b begins a UTF-8 character.
func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// continuation is the page a continuation handed out free (nextPage,
// gate.Reading): page of the reply's pages, and the text it gave, to tell
// whether the reply carries anything more (freeContinuation).
type continuation struct {
	page, of int
	text     string
}

// withNotes is out's text as the record keeps it: the text, and then
// browsergate's own notes on a line of their own.
func withNotes(out output) string {
	if out.notes == "" {
		return out.Text
	}
	return strings.TrimRight(out.Text, "\n") + "\n" + out.notes
}

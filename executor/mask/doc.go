// Package mask takes secrets' values out of everything browsergate hands
// back, records or logs: tool results, snapshots, page state, refused
// requests, evidence envelopes, approval questions and log lines. A
// [Masker] holds some secrets (a manifest's [secrets.NAME] tables) and
// writes [secret NAME] in place of a whole value and [part of secret NAME]
// in place of every run of [MinPart] or more of its consecutive
// characters: a field that kept a prefix, a page that shows a part of the
// value, a URL that carries it.
//
// What it catches. Each character of a run may come in any of these
// spellings, mixed freely within one run (a query as Chromium
// canonicalises it, k&%209%3CQ, is masked as the value k& 9<Q is):
//
//   - as it is, and with white space collapsed as the accessibility tree
//     shows it (runs of spaces, a no-break space, as one space);
//   - percent-encoded: either case of hex, UTF-8 beyond ASCII, '+' for a
//     space, or encoded twice (%253C, a URL carried in another's query);
//   - as an HTML character reference: &amp; &lt; &gt; &quot; &apos;
//     &nbsp;, decimal or hexadecimal (&#39; &#x3C;);
//   - as a JSON, JavaScript or Go string escape: \" \\ \/ \', \u003c (a
//     surrogate pair beyond the BMP), \u{3c}, \U0000003c, \x3c;
//   - beyond ASCII, a %XX or a raw byte also as the windows-1252
//     character it stands for (what a form on a windows-1252 or
//     ISO-8859-1 page sends), and a character of 80 to 9F hex, however
//     spelled, as windows-1252 reads it (&#150; is an en dash);
//   - in either case: each letter stands for its simple case folding
//     (unicode.SimpleFold: k, K and the Kelvin sign), and ß, ẞ and the
//     Latin ligatures (ﬁ, ﬀ, …) also for the letters their case mapping
//     gives (SS, FI), written as they are.
//
// Runs are found leftmost-longest, so a whole value is named as such and
// not as two parts, in time linear in the text.
//
// It masks only what came from a page, the browser or the agent, never
// browsergate's own words around it: a text built with the marks of
// package internal/pagetext is masked between the marks ([Masker.Finish]),
// and a label already in a text is left as it is, so a secret that shares
// six characters with a sentence, a stage or its own label changes none of
// them.
//
// For the agent a masker narrows: [Masker.Only] keeps the secrets a page
// could hold (which ones is the executor's to say), and [Masker.ForAgent]
// leaves as they are the runs that the agent's own texts of its session
// hold ([AgentTexts]), in whatever spelling or case they come back, so
// that what is masked never tells a right guess from a wrong one. The
// evidence and the logs are masked with the full masker.
//
// What it does not catch: other legacy encodings (Shift_JIS, GBK,
// KOI8-R, …); other multi-letter case mappings (Greek with iota
// subscripts, Armenian ligatures), which are matched one for one only; a
// multi-letter case mapping spelled escaped in the middle of a value
// (K%53%534 for Kß4), which breaks it into two runs, each masked only if
// it is MinPart characters or more; a value a page transforms beyond
// these spellings (base64, reversed, other characters put between its
// own); and pixels: a screenshot shows what the page shows.
//
// The package is pure: no browser, no session. A nil *Masker masks
// nothing.
package mask

// Package snapshot renders the page as an agent reads it: its text, one
// line per block (a paragraph with its links and inline code is one line),
// in a Markdown-like form — "## Heading", "- list item", "| table | row |",
// fenced code blocks — with every element the agent can act on marked by
// a ref:
//
//	[link text](e4 /docs/next)           a link, with its target
//	[button "Save" e5]                   a control, with its state
//	[textbox "Email" e6 value="a@b.c"]
//
// It is rendered from two reads the page cannot forge, which the executor
// makes over CDP and hands over as a [Capture]: the layout (DOMSnapshot:
// what is displayed, block or inline, preformatted or not) and the
// accessibility tree (each control's role, name, value and state), of the
// tab's process and of each out-of-process frame it embeds. Text that is
// not displayed is left out; nothing displayed is. The page's main
// landmark comes first, then the rest in document order.
//
// The package is pure: it reads the capture and nothing else, so that it
// can be tested, and measured, on captures saved from a real browser
// (testdata/*.capture.json, taken again by the executor's
// TestSnapshotCaptures). It also derives, from the layout alone, what the
// tree would say of the plain links and table parts of a page
// ([PlainLinks], [TableParts]), which the executor's element read need not
// ask the browser about. It does not mask secrets: the executor masks the
// rendered text.
package snapshot

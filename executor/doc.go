// Package executor runs browsergate's Observe-Reason-Gate-Act loop.
//
// The MCP layer (package toolclad) hands every tool call to an [Executor]
// through the toolclad.Runner interface. For each call the executor:
//
//  1. refuses calls whose arguments failed validation, whose session has
//     expired, or that exceed max_interactions;
//  2. observes the page state of the session's tab over CDP;
//  3. has package gate decide the call on those facts, and enforces what
//     it says: URL scope on every scope-checked url argument and on the
//     link or form a click/submit would follow, then the Cedar policies;
//     a call that only a human's approval would let through is held until
//     a human answers through the approval broker (package approval: the
//     operator socket, or MCP elicitation asked in two rounds), and no
//     answer denies it;
//  4. acts through chromedp, waits until the page is stable (load event,
//     network quiet, DOM quiet: never a fixed sleep), and checks the final
//     URL against the scope again;
//  5. appends an evidence envelope, durably, before the reply goes back.
//
// Any error inside the gate is a denial. A refusal is an ordinary tool
// result with IsError set, naming the rule and the reason.
//
// Browsers: connect = "launch" starts one headless Chromium per launch
// configuration and keeps it warm; every session gets its own browser
// context (Target.createBrowserContext), so cookies and storage never cross
// sessions. connect = "live" attaches to a running Chrome through its
// DevTools endpoint and likewise opens a fresh browser context per session.
//
// Its files, by concern: the loop — executor.go (the Executor and its
// sessions), run.go (one call's turn), approve.go, question.go, operator_end.go
// (an operator ends a session), enforce.go, record.go,
// reply.go, and webengine.go for the browserless engine; the command
// table, commands.go, the file to open to add a command, with each
// command's act in a commands_<what>.go file; a session and its browser —
// session.go, browser.go, tab.go, tabs.go, groups.go, observe.go,
// element.go, world.go (the isolated world observe reads in), watch.go,
// dialogs.go, downloads.go, capture.go and capture_ax.go (what a snapshot
// reads of the page over CDP; its rendering is package snapshot's),
// emulation.go (what emulate sets, as values); the request guard, which
// judges every request the session's pages make and gives them the
// session's emulation, in the guard_*.go files; and what is masked
// of what leaves (maskscope.go, maskturn.go; the masking is package mask's).
package executor

// Package reload loads a daemon's manifests and policy directory as one
// set, and swaps a new set into the running daemon whole or not at all.
//
// A set that does not load, whose policies fail the directory's own tests
// (policy-tests.json), whose tool names clash, or that the executor
// refuses is logged and refused, and the previous set keeps serving: a
// typo in a policy file never leaves the daemon without policies. A
// manifest whose bytes did not change keeps its *toolclad.Manifest, so the
// executor keeps its sessions and browser across the reload.
//
// The Reloader is triggered by SIGHUP (the daemon's choice) and, with
// Watch, by any change to the files' contents.
package reload

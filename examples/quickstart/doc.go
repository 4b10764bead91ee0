// Package quickstart is the README's quick start: a governed browsing
// session against the demo site (package demosite), played by a scripted
// agent through the official MCP client, with a scripted human operator
// who answers the calls held for approval over the operator socket.
//
// It is linked only into `browsergate demo`, which is built with the demo
// build tag (go run -tags demo ./cmd/browsergate demo): the release binary
// carries neither the demo site nor this package.
package quickstart

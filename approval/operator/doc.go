// Package operator is the operator's approval channel: a small HTTP API on
// a Unix socket through which a human lists the calls held for approval and
// approves or denies them, and the client that `browsergate approvals`
// uses to reach it.
//
// The channel is out of the agent's reach by construction. The socket is
// created mode 0600, so only the daemon's user can connect; every request
// must also carry a bearer token that Listen writes to a file beside the
// socket (TokenPath, also 0600) and come from this user or root, as the
// kernel reports the peer (SO_PEERCRED). Neither the socket nor the token
// is ever handed to the agent: the MCP connection carries browser commands
// only, and no browser command reaches a Unix socket.
//
//	GET  /v1/approvals        the pending calls, oldest first
//	POST /v1/approvals/{id}   {"approve": bool, "by": "...", "note": "..."}, or for
//	                          a question {"answer": "...", "secret": bool, "by": "..."}
//	GET  /v1/evidence         a consistent copy of the evidence file (bbolt)
package operator

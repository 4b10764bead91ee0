package egress

import "errors"

// Sentinel errors. Each error this package returns wraps exactly one of them,
// so callers can match with errors.Is and never by message.
var (
	// ErrNoPolicy means Config.Policy is nil. A proxy without a policy would
	// have to either forward everything or nothing; New refuses instead of
	// guessing.
	ErrNoPolicy = errors.New("egress: no policy")

	// ErrNotLoopback means Listen was given an address that is not a
	// loopback IP literal (or "localhost"). The proxy is for the browser on
	// this machine; listening elsewhere would make it an open proxy.
	ErrNotLoopback = errors.New("egress: listen address is not loopback")

	// ErrListening means Listen was called on a proxy that already listens.
	// One proxy has one address, so that its own address can be refused as
	// a target.
	ErrListening = errors.New("egress: already listening")

	// ErrClosed means the proxy (or the gateway) was closed: it neither
	// listens nor forwards again.
	ErrClosed = errors.New("egress: proxy closed")

	// ErrRemoved means a connection was to become a tunnel for credentials
	// that were removed from their gateway (or whose proxy closed) while the
	// request was under way: a session's tunnel ends with the session's
	// route, so the connection is closed instead.
	ErrRemoved = errors.New("egress: credentials removed from the gateway")

	// ErrUnpinnedDial means the upstream transport tried to dial an address
	// other than the one checked for the request it serves. It cannot happen
	// by design (outgoing URLs carry the pinned address); the dial is refused
	// if it ever does.
	ErrUnpinnedDial = errors.New("egress: dial to an address that was not checked")

	// ErrNoAnswers means a lookup succeeded but returned no address: there
	// is nothing to check, so there is nothing to dial.
	ErrNoAnswers = errors.New("egress: lookup returned no addresses")
)

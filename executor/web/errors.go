package web

import "errors"

// ErrNoDestination refuses a request whose connection has no IP address to
// count it against (requests_per_second_per_host counts by the address
// dialled): a dialer that is not the egress gate's, which always connects
// to an IP literal.
var ErrNoDestination = errors.New("the connection's remote address is not an IP address, so its request cannot be counted against requests_per_second_per_host")

// ErrNoHost refuses a request whose URL names no host to count it against
// (HostLimiter.WaitHost).
var ErrNoHost = errors.New("the request's URL names no host, so it cannot be counted against requests_per_second_per_host")

package netlab

import "errors"

// ErrNotLiteral is returned by Listen and Dial for an address whose host
// is a name rather than an IP literal. Go resolves a name on other
// goroutines, whose threads are in the root namespace, so a name could
// send DNS queries from outside the lab.
var ErrNotLiteral = errors.New("netlab: the address's host is not an IP literal")

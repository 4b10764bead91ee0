package scope

import (
	"errors"
	"fmt"
)

// Sentinel errors. Each failure returned by this package wraps exactly one of
// them, so callers can match with errors.Is and never by message.
var (
	// ErrInvalidURL means the input is not an absolute URL: it has no scheme,
	// or its authority is malformed. browsergate never resolves relative
	// references, so such input is always refused.
	ErrInvalidURL = errors.New("invalid URL")

	// ErrEmptyHost means a URL of a special scheme (http, https, ws, wss, ftp)
	// has no host, or a host that canonicalises to nothing (for example one
	// made only of characters that IDNA maps away, such as a soft hyphen).
	ErrEmptyHost = errors.New("empty host")

	// ErrForbiddenCodePoint means the host contains a code point that WHATWG
	// URL forbids in domains (space, '%', '/', ':', '@', control characters,
	// ...), after percent-decoding and IDNA mapping.
	ErrForbiddenCodePoint = errors.New("forbidden code point in host")

	// ErrIDNA means IDNA UTS #46 processing refused the host (a disallowed
	// code point, a malformed punycode label, a bidi violation, ...).
	ErrIDNA = errors.New("host fails IDNA processing")

	// ErrInvalidLabel means the host has an empty label ("a..b", ".a"): such
	// a name cannot be resolved, and refusing it keeps glob matching simple.
	ErrInvalidLabel = errors.New("empty label in host")

	// ErrInvalidIPv4 means the host ends in a number, so WHATWG URL requires
	// it to be an IPv4 address, and it is not one (a non-numeric part, more
	// than four parts, or a part that overflows).
	ErrInvalidIPv4 = errors.New("invalid IPv4 address")

	// ErrInvalidIPv6 means a bracketed host is not a valid IPv6 address.
	ErrInvalidIPv6 = errors.New("invalid IPv6 address")

	// ErrZoneID means an IPv6 host carries a zone identifier ("%eth0"). URLs
	// cannot carry zones (WHATWG URL rejects them) and a zone would make the
	// same address mean different interfaces.
	ErrZoneID = errors.New("IPv6 zone identifiers are not allowed")

	// ErrInvalidPort means a URL's port is not a decimal number in 0-65535,
	// or a port of an allow_private_cidrs clause or of a DenyAddrPorts
	// endpoint is not one in 1-65535 (port 0 cannot be connected to).
	ErrInvalidPort = errors.New("invalid port")

	// ErrInvalidPattern means a domain glob in allowed_domains or
	// blocked_domains is malformed; see the package documentation for the
	// glob grammar.
	ErrInvalidPattern = errors.New("invalid domain pattern")

	// ErrInvalidCIDR means an allow_private_cidrs entry is not a CIDR prefix
	// in canonical form (host bits must be zero, so "10.0.0.5/8" is refused as
	// a probable typo rather than silently widened), or what follows the
	// prefix is not a "port N" / "ports N,M" clause.
	ErrInvalidCIDR = errors.New("invalid CIDR prefix")

	// ErrMetadataGrant means an allow_private_cidrs entry names only cloud
	// metadata addresses, which can never be granted: reaching them hands
	// the agent the host's cloud credentials.
	ErrMetadataGrant = errors.New("cloud metadata addresses cannot be granted")
)

// EntryError reports one bad entry of a Config, naming the manifest field and
// the entry so that a manifest loader can point at the exact line. New joins
// one EntryError per bad entry with errors.Join.
type EntryError struct {
	Field string // manifest key: "allowed_domains", "blocked_domains", "allow_private_cidrs" or "allowed_ports"; "deny_addr_ports" for Config.DenyAddrPorts
	Index int    // position of the entry in the field's list; -1 when the entry is a key (a domain set's name)
	Entry string // the entry as written
	Err   error  // wraps one of the sentinel errors
}

// Error names the field, the index and the entry.
func (e *EntryError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s %q: %v", e.Field, e.Entry, e.Err)
	}
	return fmt.Sprintf("%s[%d] %q: %v", e.Field, e.Index, e.Entry, e.Err)
}

// Unwrap returns the underlying sentinel-wrapping error.
func (e *EntryError) Unwrap() error { return e.Err }

package scope

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ipv4Overflow is a saturation value for IPv4 number parts: anything above
// 2^32 fails every later check, so there is no need to keep counting.
const ipv4Overflow = 1 << 33

// endsInNumber is WHATWG URL's "ends in a number" checker: a host whose last
// label (ignoring one trailing dot) is numeric must be an IPv4 address.
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && allDigits(last) {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseIPv4Number parses one part of a legacy IPv4 address: "0x"/"0X" prefix
// for hexadecimal, a leading "0" for octal, decimal otherwise. Values above
// 2^32 saturate at ipv4Overflow.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		radix, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		radix, s = 8, s[1:]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		c := s[i]
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case radix == 16 && isHex(c):
			d = uint64(unhex(c))
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		v = v*radix + d
		if v > ipv4Overflow {
			v = ipv4Overflow
		}
	}
	return v, true
}

// parseIPv4 is WHATWG URL's IPv4 parser: one to four parts, every part but
// the last at most 255, the last filling the remaining bytes.
func parseIPv4(s string) (netip.Addr, error) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, fmt.Errorf("%w: %q has more than four parts", ErrInvalidIPv4, s)
	}
	var nums [4]uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, fmt.Errorf("%w: %q: part %q is not a number", ErrInvalidIPv4, s, p)
		}
		nums[i] = n
	}
	last := len(parts) - 1
	for i := range last {
		if nums[i] > 255 {
			return netip.Addr{}, fmt.Errorf("%w: %q: part %q overflows a byte", ErrInvalidIPv4, s, parts[i])
		}
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, fmt.Errorf("%w: %q: last part %q overflows", ErrInvalidIPv4, s, parts[last])
	}
	v := nums[last]
	for i := range last {
		v += nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// parseIPv6 is WHATWG URL's IPv6 parser (the text between the brackets):
// hex pieces, one "::" compression, an optional trailing dotted IPv4 part
// with no leading zeros, and no zone identifier.
func parseIPv6(s string) (netip.Addr, error) {
	if strings.IndexByte(s, '%') >= 0 {
		return netip.Addr{}, fmt.Errorf("%w: %q", ErrZoneID, s)
	}
	bad := func(why string) (netip.Addr, error) {
		return netip.Addr{}, fmt.Errorf("%w: %q: %s", ErrInvalidIPv6, s, why)
	}
	var pieces [8]uint16
	piece, compress, p, n := 0, -1, 0, len(s)
	if n > 0 && s[0] == ':' {
		if n < 2 || s[1] != ':' {
			return bad("a leading ':' must be part of '::'")
		}
		p = 2
		piece++
		compress = piece
	}
	for p < n {
		if piece == 8 {
			return bad("more than eight pieces")
		}
		if s[p] == ':' {
			if compress != -1 {
				return bad("more than one '::'")
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && p < n && isHex(s[p]) {
			value = value*16 + int(unhex(s[p]))
			p++
			length++
		}
		if p < n && s[p] == '.' {
			if length == 0 {
				return bad("an IPv4 part must start with a digit")
			}
			p -= length
			if piece > 6 {
				return bad("no room for an embedded IPv4 address")
			}
			seen := 0
			for p < n {
				if seen > 0 {
					if s[p] != '.' || seen >= 4 {
						return bad("malformed embedded IPv4 address")
					}
					p++
				}
				if p >= n || !isDigit(s[p]) {
					return bad("malformed embedded IPv4 address")
				}
				octet := -1
				for p < n && isDigit(s[p]) {
					d := int(s[p] - '0')
					switch octet {
					case -1:
						octet = d
					case 0:
						return bad("leading zero in embedded IPv4 address")
					default:
						octet = octet*10 + d
					}
					if octet > 255 {
						return bad("embedded IPv4 part overflows a byte")
					}
					p++
				}
				pieces[piece] = pieces[piece]<<8 | uint16(octet)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return bad("embedded IPv4 address needs four parts")
			}
			break
		}
		if p < n && s[p] == ':' {
			p++
			if p >= n {
				return bad("trailing ':'")
			}
		} else if p < n {
			return bad(strconv.Quote(string(s[p])) + " is not a hex digit")
		}
		pieces[piece] = uint16(value)
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		piece = 7
		for piece != 0 && swaps > 0 {
			pieces[piece], pieces[compress+swaps-1] = pieces[compress+swaps-1], pieces[piece]
			piece--
			swaps--
		}
	} else if piece != 8 {
		return bad("fewer than eight pieces and no '::'")
	}
	var b [16]byte
	for i, v := range pieces {
		b[2*i], b[2*i+1] = byte(v>>8), byte(v)
	}
	return netip.AddrFrom16(b), nil
}

// formatIPv6 serialises an IPv6 address as WHATWG URL does (and RFC 5952):
// lowercase hex, the first longest run of two or more zero pieces
// compressed, and never a dotted IPv4 tail (netip prints "::ffff:1.2.3.4",
// Chromium prints "::ffff:102:304").
func formatIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestStart, bestLen := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == bestStart {
			sb.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != bestStart+bestLen {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
	}
	return sb.String()
}

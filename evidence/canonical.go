package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// timeLayout is the canonical time form: UTC, always nine fractional digits,
// so equal instants always encode to equal bytes.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// CanonicalJSON returns the bytes whose SHA-256 is e's hash: e's JSON with
// the "hash" member removed, in the canonical form of
// docs/evidence-format.md (sorted keys, no whitespace, no HTML escaping,
// time in UTC with nine fractional digits). e is not modified.
func CanonicalJSON(e *Envelope) ([]byte, error) {
	obj, err := envelopeObject(e)
	if err != nil {
		return nil, err
	}
	return appendCanonical(nil, obj)
}

// AnchorLeaf is the leaf that anchors a record in a fleet's transparency
// log: the canonical JSON of {"hash","log","seq","session"} (fleet.md).
func AnchorLeaf(logID, session string, seq uint64, hash string) []byte {
	b, _ := appendCanonical(nil, map[string]any{"hash": hash, "log": logID, "seq": json.Number(strconv.FormatUint(seq, 10)), "session": session})
	return b
}

// Hash returns the lowercase hex SHA-256 of CanonicalJSON(e): what
// Append stores in e.Hash and what Verify recomputes.
func Hash(e *Envelope) (string, error) {
	b, err := CanonicalJSON(e)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// envelopeObject turns e into the generic JSON object that is hashed: its
// encoding/json form decoded with numbers kept as written, the time
// replaced by its canonical text, and no "hash" member.
func envelopeObject(e *Envelope) (map[string]any, error) {
	// The output is the one large field: keep it out of the
	// marshal-and-decode round trip and put the string in directly (the
	// encoder replaces invalid UTF-8 exactly as that round trip would).
	small := *e
	small.Output = ""
	raw, err := json.Marshal(&small)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCanonical, err)
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	obj["output"] = e.Output
	obj["time"] = e.Time.UTC().Format(timeLayout)
	delete(obj, "hash")
	return obj, nil
}

// decodeObject parses one JSON object, keeping numbers as json.Number so
// that no digit is lost, and refuses trailing data.
func decodeObject(raw []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCanonical, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrNotCanonical)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrNotCanonical)
	}
	return obj, nil
}

// parsedRecord is a stored record as Verify sees it.
type parsedRecord struct {
	canonical bool   // the stored bytes are exactly their canonical form
	stored    string // the "hash" member as stored ("" when absent)
	computed  string // SHA-256 of the canonical form without "hash"
	obj       map[string]any
}

// hashRecord recomputes the hash of stored record bytes the way an external
// verifier would: parse, drop "hash", encode canonically, SHA-256.
func hashRecord(raw []byte) (parsedRecord, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return parsedRecord{}, err
	}
	full, err := appendCanonical(nil, obj)
	if err != nil {
		return parsedRecord{}, err
	}
	var p parsedRecord
	p.canonical = bytes.Equal(full, raw)
	if h, ok := obj["hash"].(string); ok {
		p.stored = h
	}
	delete(obj, "hash")
	body, err := appendCanonical(nil, obj)
	if err != nil {
		return parsedRecord{}, err
	}
	p.computed = sha256Hex(body)
	p.obj = obj
	return p, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// appendCanonical appends the canonical encoding of v, a value as produced
// by decodeObject (nil, bool, string, json.Number, []any, map[string]any).
func appendCanonical(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		b = append(b, "null"...)
	case bool:
		b = strconv.AppendBool(b, x)
	case string:
		b = appendString(b, x)
	case json.Number:
		b, err = appendNumber(b, string(x))
	case []any:
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendCanonical(b, el); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // Go compares strings bytewise: UTF-8 byte order
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = appendCanonical(b, x[k]); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	default:
		return nil, fmt.Errorf("%w: unexpected %T", ErrNotCanonical, v)
	}
	return b, err
}

// appendString writes s as a JSON string with the minimal escaping of
// RFC 8785: \" \\ \b \f \n \r \t, \u00xx for other control characters,
// everything else as UTF-8. Invalid UTF-8 becomes U+FFFD, as encoding/json
// also does, so no input lacks a canonical form.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		// Copy the run of bytes that need no escaping in one append.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendNumber writes a JSON number token canonically. Integer tokens are
// kept digit for digit (so a uint64 never passes through a float; "-0"
// becomes "0"); any other number is written as ECMAScript's
// Number.prototype.toString writes the nearest float64, which is what
// encoding/json and JSON.stringify produce.
func appendNumber(b []byte, tok string) ([]byte, error) {
	if isIntegerToken(tok) {
		if tok == "-0" {
			return append(b, '0'), nil
		}
		return append(b, tok...), nil
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("%w: number %q", ErrNotCanonical, tok)
	}
	return appendFloat(b, f), nil
}

// isIntegerToken reports whether tok is -?(0|[1-9][0-9]*).
func isIntegerToken(tok string) bool {
	s := tok
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// appendFloat formats f as ECMAScript Number::toString does: plain decimal
// for 1e-6 <= |f| < 1e21, otherwise shortest exponent form like "1e+21" or
// "1.5e-7".
func appendFloat(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// Go writes e-07 / e+21; ECMAScript writes e-7 / e+21 (no leading zero).
	exp := bytes.IndexByte(b[start:], 'e') + start
	digits := exp + 2
	for digits < len(b)-1 && b[digits] == '0' {
		b = append(b[:digits], b[digits+1:]...)
	}
	return b
}

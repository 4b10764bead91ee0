package evidence

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// FuzzCanonical checks that any envelope content either has no canonical
// form (ErrNotCanonical) or round-trips: the stored form is canonical by
// the verifier's own parse, and the verifier recomputes the writer's hash.
func FuzzCanonical(f *testing.F) {
	f.Add("url", "https://a.example.com/", int64(3), 1.5, true)
	f.Add("", "\x00\u2028<>&\xff", int64(math.MinInt64), 1e21, false)
	f.Add("é", "\"\\", int64(-1), 1e-7, true)
	f.Add("hash", "x", int64(0), math.NaN(), false)
	f.Fuzz(func(t *testing.T, k, s string, n int64, fl float64, b bool) {
		e := &Envelope{
			Version: FormatVersion, Session: s, Seq: uint64(n), Time: time.Unix(0, n).UTC(),
			Command: k, Output: s,
			Args: map[string]any{
				k: s, "n": n, "f": fl, "b": b,
				"nested": map[string]any{k: []any{s, n, fl, nil, map[string]any{}}},
			},
			Before:   map[string]any{k: s},
			Decision: Decision{Reasons: []string{s, k}, PolicyIDs: []string{}},
		}
		body, err := CanonicalJSON(e)
		if err != nil {
			if !errors.Is(err, ErrNotCanonical) {
				t.Fatalf("error %v is not ErrNotCanonical", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("canonical form is not JSON: %q", body)
		}
		obj, err := envelopeObject(e)
		if err != nil {
			t.Fatal(err)
		}
		e.Hash = sha256Hex(body)
		obj["hash"] = e.Hash
		stored, err := appendCanonical(nil, obj)
		if err != nil {
			t.Fatal(err)
		}
		p, err := hashRecord(stored)
		if err != nil {
			t.Fatalf("verifier cannot read the stored form %q: %v", stored, err)
		}
		if !p.canonical || p.stored != e.Hash || p.computed != e.Hash {
			t.Fatalf("verifier disagrees: %+v, writer hash %s, stored %q", p, e.Hash, stored)
		}
		if !math.IsNaN(fl) && !math.IsInf(fl, 0) {
			want, _ := json.Marshal(fl)
			if got := appendFloat(nil, fl); string(got) != string(want) {
				t.Fatalf("appendFloat(%v) = %s, encoding/json writes %s", fl, got, want)
			}
		}
	})
}

// FuzzHashRecord feeds arbitrary stored bytes to the verifier's parser: it
// must never panic, and a record it accepts must have a canonical form
// that is a fixed point.
func FuzzHashRecord(f *testing.F) {
	f.Add([]byte(`{"hash":"x","seq":1,"args":{"b":1.0,"a":-0}}`))
	f.Add([]byte(`{"a":1}{"b":2}`))
	f.Add([]byte(`{"a":1e400}`))
	f.Add([]byte(`{"a":"\ud800","a":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := hashRecord(raw)
		if err != nil {
			if !errors.Is(err, ErrNotCanonical) {
				t.Fatalf("error %v is not ErrNotCanonical", err)
			}
			return
		}
		obj, err := decodeObject(raw)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := appendCanonical(nil, obj)
		if err != nil {
			t.Fatal(err)
		}
		again, err := hashRecord(canon)
		if err != nil || !again.canonical || again.computed != p.computed {
			t.Fatalf("canonical form %q is not a fixed point: %+v, %v", canon, again, err)
		}
	})
}

func TestAppendNumber(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"12345678901234567890123", "12345678901234567890123"},
		{"1.0", "1"}, {"1e2", "100"}, {"-0.0", "0"}, {"1E21", "1e+21"}, {"0.0000001", "1e-7"},
		{"1.5e-300", "1.5e-300"}, {"123.456", "123.456"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := appendNumber(nil, tt.in)
			if err != nil || string(got) != tt.want {
				t.Errorf("appendNumber(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := appendNumber(nil, "1e400"); !errors.Is(err, ErrNotCanonical) {
		t.Errorf("1e400: %v", err)
	}
	if !strings.Contains(string(appendString(nil, "\x01")), `\u0001`) {
		t.Error("control character not escaped")
	}
}

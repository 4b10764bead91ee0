package evidence_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// TestCanonicalGolden pins the canonical bytes and hash of the worked
// example: if this changes, every existing log stops verifying.
func TestCanonicalGolden(t *testing.T) {
	t.Parallel()
	e := workedExample()
	b, err := evidence.CanonicalJSON(e)
	if err != nil {
		t.Fatal(err)
	}
	h, err := evidence.Hash(e)
	if err != nil {
		t.Fatal(err)
	}
	e.Hash = h
	// Line 1: the hashed bytes; line 2: their hash; line 3: the record as
	// stored, which is the same canonical form with the hash member.
	golden(t, "worked-example.golden", []byte(string(b)+"\n"+h+"\n"+string(storedForm(t, e))+"\n"))
}

// TestDocumentedExampleIsTrue keeps docs/evidence-format.md honest: its
// worked example must be the golden bytes and hash.
func TestDocumentedExampleIsTrue(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/evidence-format.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/worked-example.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if !bytes.Contains(doc, []byte(line)) {
			t.Errorf("docs/evidence-format.md lacks the line\n%s", line)
		}
	}
}

func canonical(t *testing.T, e *evidence.Envelope) string {
	t.Helper()
	b, err := evidence.CanonicalJSON(e)
	if err != nil {
		t.Fatalf("CanonicalJSON: %v", err)
	}
	return string(b)
}

func TestCanonicalArgsEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args map[string]any
		want string // the "args" member
	}{
		{"keys in byte order", map[string]any{"b": 1, "a": 2, "Z": 3, "aa": 4, "é": 5, "~": 6},
			`{"Z":3,"a":2,"aa":4,"b":1,"~":6,"é":5}`},
		{"nested objects sorted too", map[string]any{"x": map[string]any{"b": true, "a": nil}},
			`{"x":{"a":null,"b":true}}`},
		{"no HTML escaping", map[string]any{"s": "<a href='x'>&</a>"}, `{"s":"<a href='x'>&</a>"}`},
		{"short escapes", map[string]any{"s": "\"\\\b\f\n\r\t"}, `{"s":"\"\\\b\f\n\r\t"}`},
		{"other control characters", map[string]any{"s": "\x00\x1f\x7f"}, `{"s":"\u0000\u001f` + "\x7f" + `"}`},
		{"line separators literal", map[string]any{"s": "\u2028\u2029"}, "{\"s\":\"\u2028\u2029\"}"},
		{"invalid UTF-8 replaced", map[string]any{"s": "a\xffb"}, "{\"s\":\"a\ufffdb\"}"},
		{"integers exact", map[string]any{"i": int64(math.MaxInt64), "u": uint64(math.MaxUint64), "n": -7, "z": 0},
			`{"i":9223372036854775807,"n":-7,"u":18446744073709551615,"z":0}`},
		{"floats as ECMAScript", map[string]any{"a": 1.5, "b": 3.0, "c": 1e21, "d": 1e-7, "e": 0.1, "f": 123456789e10, "g": -0.0},
			`{"a":1.5,"b":3,"c":1e+21,"d":1e-7,"e":0.1,"f":1234567890000000000,"g":0}`},
		{"lists keep order", map[string]any{"l": []any{"b", "a", 2}}, `{"l":["b","a",2]}`},
		{"nil args", nil, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := workedExample()
			e.Args = tt.args
			got := canonical(t, e)
			if !strings.HasPrefix(got, `{"args":`+tt.want+`,"command":`) {
				t.Errorf("canonical = %s\nwant args %s", got, tt.want)
			}
		})
	}
}

func TestCanonicalExcludesHash(t *testing.T) {
	t.Parallel()
	a, b := workedExample(), workedExample()
	a.Hash, b.Hash = "aaaa", "bbbb"
	ca, cb := canonical(t, a), canonical(t, b)
	if ca != cb {
		t.Error("the hash member changes the canonical form")
	}
	if strings.Contains(ca, `,"hash":`) {
		t.Errorf("canonical form holds a hash member: %s", ca)
	}
	ha, _ := evidence.Hash(a)
	if a.Hash != "aaaa" || ha == "aaaa" {
		t.Error("Hash modified its argument or returned the stored hash")
	}
}

func TestCanonicalTime(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		time time.Time
		want string
	}{
		{"whole seconds keep nine digits", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000000000Z"},
		{"nanoseconds", time.Date(2026, 1, 2, 3, 4, 5, 120, time.UTC), "2026-01-02T03:04:05.000000120Z"},
		{"other zones become UTC", time.Date(2026, 1, 2, 4, 4, 5, 5e8, paris), "2026-01-02T03:04:05.500000000Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := workedExample()
			e.Time = tt.time
			if got := canonical(t, e); !strings.Contains(got, `"time":"`+tt.want+`"`) {
				t.Errorf("canonical = %s, want time %s", got, tt.want)
			}
		})
	}
}

func TestCanonicalRefusesUnencodable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		val  any
	}{
		{"NaN", math.NaN()},
		{"infinity", math.Inf(1)},
		{"channel", make(chan int)},
		{"function", func() {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := workedExample()
			e.Args = map[string]any{"v": tt.val}
			if _, err := evidence.CanonicalJSON(e); !errors.Is(err, evidence.ErrNotCanonical) {
				t.Errorf("error = %v, want ErrNotCanonical", err)
			}
		})
	}
}

package cedar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// PolicyTestsFile is the name of the policy tests a policy directory may
// carry beside its policies (LoadDir ignores it; `Engine.RunTests` reads it).
const PolicyTestsFile = "policy-tests.json"

// TestResult is the outcome of one policy test case.
type TestResult struct {
	Name    string   // the case's name
	Line    int      // line of the case in the file
	Passed  bool     // the decision was as expected and the request conforms to the schema
	Got     Decision // the decision the engine made
	Problem string   // why the case failed, "" when it passed
}

// testCase is one parsed case of a policy tests file.
type testCase struct {
	name          string
	line          int
	req           *Request
	allow         bool
	policies      []string // nil when the case does not check them
	needsApproval *bool
}

// RunTests runs the policy tests in the JSON file at path against the
// engine and returns one result per case, in file order. The file holds an
// array of cases:
//
//	{"name": "...", "request": {...}, "expect": "allow" | "deny",
//	 "policies": ["ids that must be the determining policies"],
//	 "needs_approval": true | false}
//
// where request is read by ParseRequestJSON and policies and
// needs_approval are optional (policies: [] asserts a default deny). A
// case passes when its request conforms to the schema (ValidateRequest)
// and the decision matches every expectation it states; a failing case is
// a result with a Problem, not an error. The error is for a file that
// cannot be used: unreadable, not JSON (with line, column and offset), or
// a case with an unknown key, a value of the wrong type or a duplicate
// name (with the case's line:col, its number counting from 1 and its
// name); it wraps ErrPolicyTests.
func (e *Engine) RunTests(path string) ([]TestResult, error) {
	if e == nil || e.set == nil {
		return nil, fmt.Errorf("%w: no policy engine loaded", ErrPolicyTests)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicyTests, err)
	}
	cases, err := parseTests(path, data)
	if err != nil {
		return nil, err
	}
	results := make([]TestResult, len(cases))
	for i, c := range cases {
		results[i] = e.runCase(c)
	}
	return results, nil
}

func (e *Engine) runCase(c testCase) TestResult {
	d := e.Decide(c.req)
	var problems []string
	if err := e.ValidateRequest(c.req); err != nil {
		problems = append(problems, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if d.Allowed != c.allow {
		problems = append(problems, fmt.Sprintf("want %s, got %s: %s", verdict(c.allow), verdict(d.Allowed), strings.Join(d.Reasons, "; ")))
	}
	if c.policies != nil {
		got := slices.Sorted(slices.Values(d.PolicyIDs))
		want := slices.Sorted(slices.Values(c.policies))
		if !slices.Equal(got, want) {
			problems = append(problems, fmt.Sprintf("determining policies are %q, want %q", got, want))
		}
	}
	if c.needsApproval != nil && d.NeedsApproval != *c.needsApproval {
		problems = append(problems, fmt.Sprintf("needs_approval is %v, want %v", d.NeedsApproval, *c.needsApproval))
	}
	return TestResult{Name: c.name, Line: c.line, Passed: len(problems) == 0, Got: d, Problem: strings.Join(problems, "; ")}
}

func verdict(allowed bool) string {
	if allowed {
		return "allow"
	}
	return "deny"
}

// parseTests reads the array of cases, reporting the first unusable case
// (or JSON error) with its position.
func parseTests(path string, data []byte) ([]testCase, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrPolicyTests, path}, args...)...)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fail("%v", describeJSONError(data, err))
	}
	if tok != json.Delim('[') {
		return nil, fail("want a JSON array of test cases")
	}
	var cases []testCase
	names := map[string]int{}
	for n := 1; dec.More(); n++ {
		start := skipSeparators(data, int(dec.InputOffset()))
		line, col := lineCol(data, start)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fail("case %d: %v", n, describeJSONError(data, err))
		}
		c, errs := parseCase(raw)
		label := fmt.Sprintf("%d:%d: case %d", line, col, n)
		if c.name != "" {
			label += fmt.Sprintf(" %q", c.name)
		}
		if prev, dup := names[c.name]; dup && c.name != "" {
			errs = append(errs, fmt.Errorf("duplicate name (case %d has it too)", prev))
		}
		if len(errs) > 0 {
			msgs := make([]string, len(errs))
			for i, err := range errs {
				msgs[i] = err.Error()
			}
			return nil, fail("%s: %s", label, strings.Join(msgs, "; "))
		}
		names[c.name] = n
		c.line = line
		cases = append(cases, c)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail("%v", describeJSONError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail("offset %d: data after the array of test cases", dec.InputOffset())
	}
	return cases, nil
}

// skipSeparators moves off past the whitespace and comma before a value.
func skipSeparators(data []byte, off int) int {
	for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// parseCase reads one case object, returning every problem.
func parseCase(raw []byte) (testCase, []error) {
	var c testCase
	m, err := decodeObjectValue(raw)
	if err != nil {
		return c, []error{err}
	}
	var errs []error
	add := func(key string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %v", key, err))
		}
	}
	for _, key := range sortedKeys(m) {
		raw := m[key]
		switch key {
		case "name":
			if err := decodeString(raw, &c.name); err != nil {
				add(key, err)
			} else if strings.TrimSpace(c.name) == "" {
				add(key, errors.New("empty name"))
			}
		case "request":
			obj, err := decodeObjectValue(raw)
			if err != nil {
				add(key, err)
				break
			}
			var rerrs []error
			c.req, rerrs = requestFromFields(obj)
			for _, err := range rerrs {
				errs = append(errs, fmt.Errorf("request: %v", err))
			}
		case "expect":
			var s string
			if err := decodeString(raw, &s); err != nil {
				add(key, err)
			} else if s != "allow" && s != "deny" {
				add(key, fmt.Errorf(`want "allow" or "deny", got %q`, s))
			}
			c.allow = s == "allow"
		case "policies":
			add(key, decodeStrings(raw, &c.policies))
		case "needs_approval":
			var b bool
			add(key, decodeBool(raw, &b))
			c.needsApproval = &b
		default:
			add(key, errors.New("unknown key"))
		}
	}
	for _, key := range []string{"name", "request", "expect"} {
		if _, ok := m[key]; !ok {
			errs = append(errs, fmt.Errorf("key %q is missing", key))
		}
	}
	return c, errs
}

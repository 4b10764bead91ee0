package cedar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// BuiltinCommands are the commands the executor knows. A request carries a
// counter session_<command>_count for each, plus session_submit_count; the
// shipped schema declares them all. Read it; do not modify it.
var BuiltinCommands = []string{"navigate", "snapshot", "click", "type_text", "submit_form", "screenshot",
	"go_back", "wait_for", "extract_html", "list_tabs", "execute_js", "scroll", "network_timing",
	"switch_tab", "new_tab", "close_tab", "press_key", "select_option", "hover", "go_forward", "reload", "handle_dialog", "read", "console_messages", "network_log", "upload_file", "download",
	"save_pdf", "await_human", "fetch_page", "search_web", "download_file", "network_requests", "network_request", "find", "accessibility_audit", "performance_trace", "drag", "fill_form", "emulate", "save_storage_state", "load_storage_state", "new_context", "switch_context"}

// Defaults of a request read by ParseRequestJSON, for the fields a policy
// test leaves out.
const (
	TestPrincipal = "test"
	TestSession   = "test"
	TestTool      = "test"
	TestRiskTier  = "low"
)

// pageStateKeys are the page_state fields and their JSON kinds.
var pageStateKeys = map[string]string{
	"url": "string", "title": "string", "domain": "string",
	"has_forms": "boolean", "is_authenticated": "boolean", "page_loaded": "boolean",
	"tab_count": "integer",
}

// ParseRequestJSON reads a Request from the JSON form policy tests use:
// an object whose snake_case keys mirror the Request fields (principal,
// action, resource_type, session, tool, command, args, url, url_domain,
// domain_sets, page_state, risk_tier, human_approved, interaction_count,
// counters, and time in RFC 3339).
//
// It is strict: an unknown key, at the top level or in page_state, is an
// error naming the key, and so is a value of the wrong type. A key left out
// takes a default that keeps tests short and the request conforming to the
// shipped schema: principal, session and tool "test", risk_tier "low",
// every page_state field false, "" or 0, and every counter of
// BuiltinCommands (and session_submit_count) 0; given page_state fields and
// counters replace those defaults one by one. A missing time means the time
// of the decision. Numbers in args become Longs when they are integers.
// Errors wrap ErrRequestJSON.
func ParseRequestJSON(data []byte) (*Request, error) {
	fields, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRequestJSON, err)
	}
	r, errs := requestFromFields(fields)
	if len(errs) > 0 {
		for i, err := range errs {
			errs[i] = fmt.Errorf("%w: %v", ErrRequestJSON, err)
		}
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// requestFromFields builds a Request from the keys of its JSON object and
// returns every problem, each naming its key.
func requestFromFields(fields map[string]json.RawMessage) (*Request, []error) {
	r := &Request{
		Principal: TestPrincipal,
		Session:   TestSession,
		Tool:      TestTool,
		RiskTier:  TestRiskTier,
		Args:      map[string]any{},
		PageState: map[string]any{},
		Counters:  map[string]int{"session_submit_count": 0},
	}
	for k, kind := range pageStateKeys {
		r.PageState[k] = zeroOf(kind)
	}
	for _, c := range BuiltinCommands {
		r.Counters["session_"+c+"_count"] = 0
	}
	strs := map[string]*string{
		"principal": &r.Principal, "action": &r.Action, "resource_type": &r.ResourceType,
		"session": &r.Session, "tool": &r.Tool, "command": &r.Command, "url": &r.URL,
		"url_domain": &r.URLDomain, "risk_tier": &r.RiskTier,
	}
	var errs []error
	for _, key := range sortedKeys(fields) {
		raw := fields[key]
		var err error
		switch key {
		case "args":
			err = decodeArgs(raw, r.Args)
		case "domain_sets":
			err = decodeStrings(raw, &r.DomainSets)
		case "page_state":
			err = decodePageState(raw, r.PageState)
		case "human_approved":
			err = decodeBool(raw, &r.HumanApproved)
		case "interaction_count":
			err = decodeInt(raw, &r.InteractionCount)
		case "counters":
			err = decodeCounters(raw, r.Counters)
		case "time":
			err = decodeTime(raw, &r.Time)
		default:
			dst, ok := strs[key]
			if !ok {
				err = errors.New("unknown key")
				break
			}
			err = decodeString(raw, dst)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %v", key, err))
		}
	}
	return r, errs
}

func zeroOf(kind string) any {
	switch kind {
	case "boolean":
		return false
	case "integer":
		return 0
	}
	return ""
}

// decodeObject reads one JSON object and nothing after it.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, describeJSONError(data, err)
	}
	if fields == nil {
		return nil, fmt.Errorf("want an object, got %s", kindOf(bytes.TrimSpace(data)))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("offset %d: data after the object", dec.InputOffset())
	}
	return fields, nil
}

// describeJSONError adds the line and column to encoding/json's errors,
// which give only a byte offset. A json.Decoder counts that offset from
// the value it was decoding, so a syntax error is located again by
// checking the whole of data.
func describeJSONError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		var whole *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(any)), &whole) {
			se = whole
		}
		// Offset counts the bytes read up to and including the bad one.
		off := min(max(int(se.Offset)-1, 0), len(data))
		line, col := lineCol(data, off)
		return fmt.Errorf("line %d col %d (offset %d): %v", line, col, off, se)
	case errors.As(err, &te):
		return fmt.Errorf("want an object, got %s", te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("offset %d: unexpected end of JSON", len(data))
	}
	return err
}

// kindOf names the JSON kind of a raw value for error messages.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string " + string(raw)
	case 't', 'f':
		return "boolean " + string(raw)
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "number " + string(raw)
}

func wrongKind(want string, raw []byte) error {
	return fmt.Errorf("want %s, got %s", want, kindOf(raw))
}

func decodeString(raw []byte, dst *string) error {
	if bytes.TrimSpace(raw)[0] != '"' || json.Unmarshal(raw, dst) != nil {
		return wrongKind("a string", raw)
	}
	return nil
}

func decodeBool(raw []byte, dst *bool) error {
	if json.Unmarshal(raw, dst) != nil || bytes.TrimSpace(raw)[0] == 'n' {
		return wrongKind("a boolean", raw)
	}
	return nil
}

func decodeInt(raw []byte, dst *int) error {
	var n json.Number
	if bytes.TrimSpace(raw)[0] == '"' || json.Unmarshal(raw, &n) != nil || n == "" {
		return wrongKind("an integer", raw)
	}
	i, err := n.Int64()
	if err != nil || i < math.MinInt || i > math.MaxInt {
		return wrongKind("an integer", raw)
	}
	*dst = int(i)
	return nil
}

func decodeStrings(raw []byte, dst *[]string) error {
	var xs []json.RawMessage
	if bytes.TrimSpace(raw)[0] != '[' || json.Unmarshal(raw, &xs) != nil {
		return wrongKind("an array of strings", raw)
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		if err := decodeString(x, &out[i]); err != nil {
			return fmt.Errorf("item %d: %v", i, err)
		}
	}
	*dst = out
	return nil
}

func decodeObjectValue(raw []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if bytes.TrimSpace(raw)[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, wrongKind("an object", raw)
	}
	return m, nil
}

func decodePageState(raw []byte, dst map[string]any) error {
	m, err := decodeObjectValue(raw)
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range sortedKeys(m) {
		kind, ok := pageStateKeys[k]
		var err error
		switch {
		case !ok:
			err = errors.New("unknown page_state field")
		case kind == "string":
			var s string
			err = decodeString(m[k], &s)
			dst[k] = s
		case kind == "boolean":
			var b bool
			err = decodeBool(m[k], &b)
			dst[k] = b
		default:
			var n int
			err = decodeInt(m[k], &n)
			dst[k] = n
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %v", k, err))
		}
	}
	return errors.Join(errs...)
}

func decodeCounters(raw []byte, dst map[string]int) error {
	m, err := decodeObjectValue(raw)
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range sortedKeys(m) {
		var n int
		if err := decodeInt(m[k], &n); err != nil {
			errs = append(errs, fmt.Errorf("%q: %v", k, err))
			continue
		}
		dst[k] = n
	}
	return errors.Join(errs...)
}

// decodeArgs reads the args object as MCP arguments arrive: any JSON, with
// numbers kept exact (json.Number) so integers become Longs.
func decodeArgs(raw []byte, dst map[string]any) error {
	if bytes.TrimSpace(raw)[0] != '{' {
		return wrongKind("an object", raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		dst[k] = v
	}
	return nil
}

func decodeTime(raw []byte, dst *time.Time) error {
	var s string
	if err := decodeString(raw, &s); err != nil {
		return fmt.Errorf("%v (an RFC 3339 time)", err)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as \"2025-01-02T03:04:05Z\", got %q", s)
	}
	*dst = t
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

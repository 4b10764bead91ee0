package cedar

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	cedargo "github.com/cedar-policy/cedar-go"
)

// Entity types and defaults of the Web namespace that the shipped policies
// and the manifest's [tool.cedar] table refer to.
const (
	AgentType           = "Web::Agent"
	AgentGroupType      = "Web::AgentGroup"
	ActionType          = "Web::Action"
	DomainType          = "Web::Domain"
	DomainSetType       = "Web::DomainSet"
	DefaultResourceType = "Web::BrowserSession"
	DefaultAction       = "browse"
)

// maxDepth bounds nesting of args and page_state values: deep enough for any
// real argument, and it turns a self-referencing map into a denial instead
// of a stack overflow.
const maxDepth = 16

// Request is one browser command to decide, in the executor's terms. Decide
// maps it onto Cedar entities (see the package documentation).
type Request struct {
	Principal        string         // agent id -> Web::Agent::"<id>"
	Groups           []string       // the agent's groups: parents Web::AgentGroup::"<group>"
	Action           string         // "browse" -> Web::Action::"browse" ("" means DefaultAction)
	ResourceType     string         // from the manifest; "" means DefaultResourceType
	Session          string         // resource id
	Tool             string         // attribute `tool`: manifest tool name
	Command          string         // attribute `command`
	Args             map[string]any // attribute `args` record (see toValue for the mapping)
	URL              string         // attribute `url` ("" when no url and no current page)
	URLDomain        string         // attribute `url_domain`: Web::Domain::"<host>" ("" allowed)
	DomainSets       []string       // parents of the domain: Web::DomainSet::"allowed", ...
	PageState        map[string]any // attribute `page_state` record
	RiskTier         string         // attribute `risk_tier`
	HumanApproved    bool           // attribute `human_approved`
	InteractionCount int            // attribute `interaction_count`
	Counters         map[string]int // one Long attribute each, e.g. session_submit_count
	Time             time.Time      // context `time` and attribute `time_ms` (unix millis); zero means now
}

// builtinAttrs are the resource attributes a counter may not shadow: a
// counter named human_approved must never replace the real approval.
var builtinAttrs = map[string]bool{
	"tool": true, "command": true, "args": true, "url": true, "url_domain": true,
	"page_state": true, "risk_tier": true, "human_approved": true,
	"interaction_count": true, "time_ms": true,
}

// when is the request's time: Time, or now when Time is zero.
func (r *Request) when() time.Time {
	if r.Time.IsZero() {
		return time.Now()
	}
	return r.Time
}

// toCedar builds the Cedar request and the entities it needs, at time ts
// (see when).
func (r *Request) toCedar(ts time.Time) (cedargo.Request, cedargo.EntityMap, error) {
	args, err := toRecord(r.Args, 0)
	if err != nil {
		return cedargo.Request{}, nil, fmt.Errorf("%w: args: %v", ErrInvalidRequest, err)
	}
	state, err := toRecord(r.PageState, 0)
	if err != nil {
		return cedargo.Request{}, nil, fmt.Errorf("%w: page_state: %v", ErrInvalidRequest, err)
	}
	ms := cedargo.Long(ts.UnixMilli())

	domain := cedargo.NewEntityUID(DomainType, cedargo.String(r.URLDomain))
	attrs := make(cedargo.RecordMap, len(builtinAttrs)+len(r.Counters))
	attrs["tool"] = cedargo.String(r.Tool)
	attrs["command"] = cedargo.String(r.Command)
	attrs["args"] = args
	attrs["url"] = cedargo.String(r.URL)
	attrs["url_domain"] = domain
	attrs["page_state"] = state
	attrs["risk_tier"] = cedargo.String(r.RiskTier)
	attrs["human_approved"] = cedargo.Boolean(r.HumanApproved)
	attrs["interaction_count"] = cedargo.Long(r.InteractionCount)
	attrs["time_ms"] = ms
	for k, v := range r.Counters {
		if builtinAttrs[k] {
			return cedargo.Request{}, nil, fmt.Errorf("%w: counter %q shadows a built-in attribute", ErrInvalidRequest, k)
		}
		attrs[cedargo.String(k)] = cedargo.Long(v)
	}

	rtype := r.ResourceType
	if rtype == "" {
		rtype = DefaultResourceType
	}
	action := r.Action
	if action == "" {
		action = DefaultAction
	}
	resource := cedargo.NewEntityUID(cedargo.EntityType(rtype), cedargo.String(r.Session))
	parents := make([]cedargo.EntityUID, len(r.DomainSets))
	for i, s := range r.DomainSets {
		parents[i] = cedargo.NewEntityUID(DomainSetType, cedargo.String(s))
	}
	groups := make([]cedargo.EntityUID, len(r.Groups))
	for i, g := range r.Groups {
		groups[i] = cedargo.NewEntityUID(AgentGroupType, cedargo.String(g))
	}
	principal := cedargo.NewEntityUID(AgentType, cedargo.String(r.Principal))
	if resource == principal || resource == domain {
		// One entity cannot be both: the resource's attributes (its
		// command among them) would be lost.
		return cedargo.Request{}, nil, fmt.Errorf("%w: the resource %s names the same entity as the request's principal or domain", ErrInvalidRequest, resource)
	}
	entities := cedargo.EntityMap{
		resource:  {UID: resource, Attributes: cedargo.NewRecord(attrs)},
		domain:    {UID: domain, Parents: cedargo.NewEntityUIDSet(parents...)},
		principal: {UID: principal, Parents: cedargo.NewEntityUIDSet(groups...)},
	}
	req := cedargo.Request{
		Principal: principal,
		Action:    cedargo.NewEntityUID(ActionType, cedargo.String(action)),
		Resource:  resource,
		Context:   cedargo.NewRecord(cedargo.RecordMap{"time": ms}),
	}
	return req, entities, nil
}

func toRecord(m map[string]any, depth int) (cedargo.Record, error) {
	if depth > maxDepth {
		return cedargo.Record{}, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	rm := make(cedargo.RecordMap, len(m))
	for k, v := range m {
		if v == nil {
			continue // absent, so `resource.args has k` is false
		}
		cv, err := toValue(v, depth+1)
		if err != nil {
			return cedargo.Record{}, fmt.Errorf("%s: %w", k, err)
		}
		rm[cedargo.String(k)] = cv
	}
	return cedargo.NewRecord(rm), nil
}

// toValue maps a Go value onto a Cedar value: strings, booleans and integers
// keep their type; a float64 or json.Number holding an integer becomes a
// Long (JSON-decoded MCP arguments arrive as float64); maps become records
// and slices sets; anything else is its fmt rendering, so a policy can still
// compare it as a string.
func toValue(v any, depth int) (cedargo.Value, error) {
	switch x := v.(type) {
	case string:
		return cedargo.String(x), nil
	case bool:
		return cedargo.Boolean(x), nil
	case int:
		return cedargo.Long(x), nil
	case int8:
		return cedargo.Long(x), nil
	case int16:
		return cedargo.Long(x), nil
	case int32:
		return cedargo.Long(x), nil
	case int64:
		return cedargo.Long(x), nil
	case uint8:
		return cedargo.Long(x), nil
	case uint16:
		return cedargo.Long(x), nil
	case uint32:
		return cedargo.Long(x), nil
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return cedargo.Long(x), nil
		}
	case uint64:
		if x <= math.MaxInt64 {
			return cedargo.Long(x), nil
		}
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return cedargo.Long(int64(x)), nil
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return cedargo.Long(n), nil
		}
	case map[string]any:
		return toRecord(x, depth)
	case []any:
		return toSet(x, depth)
	case []string:
		vals := make([]cedargo.Value, len(x))
		for i, s := range x {
			vals[i] = cedargo.String(s)
		}
		return cedargo.NewSet(vals...), nil
	}
	return cedargo.String(fmt.Sprint(v)), nil
}

func toSet(xs []any, depth int) (cedargo.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	vals := make([]cedargo.Value, 0, len(xs))
	for _, x := range xs {
		if x == nil {
			continue
		}
		cv, err := toValue(x, depth+1)
		if err != nil {
			return nil, err
		}
		vals = append(vals, cv)
	}
	return cedargo.NewSet(vals...), nil
}

package cedar

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultSchemaName is the name LoadOptions.DefaultSchema goes by when
// LoadOptions.DefaultSchemaName is empty: the file browsergate ships.
const DefaultSchemaName = "browsergate.cedarschema"

// LoadOptions are the options of LoadDirWith. The zero value is LoadDir.
type LoadOptions struct {
	// DefaultSchema is the schema (Cedar's human-readable format) used when
	// the directory holds no *.cedarschema file; nil keeps such a directory
	// refused (ErrNoSchema). browsergate passes the schema built into its
	// binary, so that a directory of policies alone loads, checked against
	// exactly the requests the daemon sends; this package embeds nothing,
	// so that it stays a leaf.
	DefaultSchema []byte
	// DefaultSchemaName names DefaultSchema in Engine.SchemaFile ("built-in
	// schema (<name>)"), in errors and in Engine.Sources; "" means
	// DefaultSchemaName.
	DefaultSchemaName string
	// Shapes are the requests the caller will send, one per manifest. For
	// each command of each shape LoadDirWith builds a representative
	// request and checks it, with Engine.ValidateRequest, against the
	// schema in use: a directory whose own schema lacks an attribute the
	// daemon sends (or declares one it never sends, or gives one another
	// type) is refused with ErrSchemaMismatch, naming the schema file and
	// what does not fit. Without the check such a schema would type-check
	// policies against requests that never occur, and every call whose
	// request did not conform would be decided by policies validated
	// against something else.
	Shapes []RequestShape
}

func (o *LoadOptions) defaultSchemaName() string {
	if o.DefaultSchemaName == "" {
		return DefaultSchemaName
	}
	return o.DefaultSchemaName
}

// RequestShape describes the requests a caller sends for one manifest.
// The representative request of a command carries every field of Request:
// the command, Args[command], a URL and its Web::Domain in the "allowed"
// set, all seven page_state fields, a risk tier, the approval flag, the
// interaction count, the time, and the counters session_submit_count and
// session_<c>_count for every c in BuiltinCommands and Commands (as the
// executor sends them).
type RequestShape struct {
	// Commands are the commands a request is built for: pass every command
	// a manifest may run (browsergate passes all of its built-in ones, so
	// that a schema is checked once for any manifest).
	Commands []string
	// Args are representative arguments by command, typed as the caller
	// sends them (string, int64, bool): give every argument a command can
	// take, so that each args attribute is checked. A command without an
	// entry is checked with no arguments.
	Args map[string]map[string]any
	// ResourceType and Action are the manifest's [tool.cedar] values; ""
	// means DefaultResourceType and DefaultAction.
	ResourceType, Action string
}

// shapeTime is the time of every representative request, so that a check
// does not depend on the clock.
var shapeTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// requests builds the representative request of each command.
func (sh *RequestShape) requests() []*Request {
	counters := map[string]int{"session_submit_count": 0}
	for _, c := range append(slices.Clone(BuiltinCommands), sh.Commands...) {
		counters["session_"+c+"_count"] = 0
	}
	state := make(map[string]any, len(pageStateKeys))
	for k, kind := range pageStateKeys {
		state[k] = zeroOf(kind)
	}
	out := make([]*Request, 0, len(sh.Commands))
	for _, c := range sh.Commands {
		out = append(out, &Request{
			Principal:    "schema-check",
			Groups:       []string{"schema-check"},
			Action:       sh.Action,
			ResourceType: sh.ResourceType,
			Session:      "schema-check",
			Tool:         "schema-check",
			Command:      c,
			Args:         sh.Args[c],
			URL:          "https://www.example.com/",
			URLDomain:    "www.example.com",
			DomainSets:   []string{"allowed"},
			PageState:    state,
			RiskTier:     "low",
			Counters:     counters,
			Time:         shapeTime,
		})
	}
	return out
}

// checkShapes validates the representative request of every command of
// every shape against the engine's schema. A problem that several
// commands share is reported once, naming them.
func (e *Engine) checkShapes(shapes []RequestShape) []error {
	var (
		order    []string                // problems, in the order first found
		commands = map[string][]string{} // problem -> commands it concerns
		checked  []string                // every command checked
	)
	for i := range shapes {
		for _, r := range shapes[i].requests() {
			if !slices.Contains(checked, r.Command) {
				checked = append(checked, r.Command)
			}
			err := e.ValidateRequest(r)
			if err == nil {
				continue
			}
			for _, fe := range flatten(err) {
				msg := strings.TrimPrefix(fe.Error(), ErrRequestSchema.Error()+": ")
				if _, seen := commands[msg]; !seen {
					order = append(order, msg)
				}
				if !slices.Contains(commands[msg], r.Command) {
					commands[msg] = append(commands[msg], r.Command)
				}
			}
		}
	}
	errs := make([]error, 0, len(order))
	for _, msg := range order {
		var which string
		switch cs := commands[msg]; {
		case len(cs) > 1 && len(cs) == len(checked):
			which = "every command"
		case len(cs) > 1:
			which = "commands " + strings.Join(cs, ", ")
		default:
			which = "command " + cs[0]
		}
		errs = append(errs, fmt.Errorf("%s: %w (%s): %s", e.schemaFile, ErrSchemaMismatch, which, msg))
	}
	return errs
}

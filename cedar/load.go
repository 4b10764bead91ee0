package cedar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	cedargo "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// PolicyInfo describes one loaded policy, so that tools (`browsergate
// check`, evidence readers) can list what is in force and where it came from.
type PolicyInfo struct {
	ID     string // @id annotation, or "file.cedar:line" when there is none
	File   string // path of the file it came from (dir joined with the name)
	Line   int    // 1-based line where the policy (or its first annotation) starts
	Effect string // "permit" or "forbid"
}

// Location renders the policy's source position as file:line, the form used
// in decision reasons.
func (p PolicyInfo) Location() string {
	return p.File + ":" + strconv.Itoa(p.Line)
}

// Engine holds a compiled, immutable policy set and the schema it was
// validated against. It is built once by LoadDir and shared: Decide and
// ValidateRequest are safe for concurrent use. A reload builds a new Engine
// and keeps the old one if loading fails.
type Engine struct {
	set        *cedargo.PolicySet
	infos      []PolicyInfo
	index      map[cedargo.PolicyID]int // policy id -> position in infos (load order)
	validator  *validate.Validator      // strict validator for the directory's schema
	schemaFile string                   // path, or "built-in schema (<name>)"
	// builtinSchema is true when the directory had no schema and
	// LoadOptions.DefaultSchema was used.
	builtinSchema bool
	sources       map[string][]byte // file name -> bytes of the schema and every policy file
	// cmdIndex leaves out the policies a request's command cannot match
	// (index.go).
	cmdIndex commandIndex
}

// LoadDir loads a policy directory: exactly one schema file (*.cedarschema,
// Cedar's human-readable schema format) and every *.cedar file (sorted by
// name, not recursive; other files such as README.md or policy-tests.json
// are ignored). Every policy is validated against the schema in strict mode,
// so a misspelt attribute, a comparison of the wrong types or an unknown
// entity type stops the load instead of failing (and denying) at run time.
//
// Every problem is reported, joined with errors.Join: a missing schema
// (ErrNoSchema, saying to copy ShippedSchema into the directory), a schema
// that does not parse or resolve (*SchemaError), each policy file that does
// not parse (*ParseError), each type error (*ValidationError, naming
// file:line:col and the policy id), duplicate ids (ErrDuplicateID), and a
// directory without a single policy (ErrNoPolicies).
//
// LoadDir is LoadDirWith(dir, nil).
func LoadDir(dir string) (*Engine, error) {
	return LoadDirWith(dir, nil)
}

// LoadDirWith is LoadDir with options (nil means none, as LoadDir): a
// schema to use when the directory holds none (LoadOptions.DefaultSchema),
// and the requests the daemon sends (LoadOptions.Shapes), which the schema
// in use must accept, else the directory is refused with ErrSchemaMismatch
// naming the schema file and what does not fit.
func LoadDirWith(dir string, opts *LoadOptions) (*Engine, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cedar: read policy dir: %w", err)
	}
	var names, schemas []string
	for _, ent := range entries {
		switch {
		case ent.IsDir():
		case strings.HasSuffix(ent.Name(), ".cedar"):
			names = append(names, ent.Name())
		case strings.HasSuffix(ent.Name(), SchemaExt):
			schemas = append(schemas, ent.Name())
		}
	}
	sort.Strings(names)
	sort.Strings(schemas)

	e := &Engine{set: cedargo.NewPolicySet(), index: map[cedargo.PolicyID]int{}, sources: map[string][]byte{}}
	var errs []error
	switch {
	case len(schemas) == 0 && opts.DefaultSchema != nil:
		name := opts.defaultSchemaName()
		e.schemaFile, e.builtinSchema = "built-in schema ("+name+")", true
		if e.validator, err = loadSchema(e.schemaFile, opts.DefaultSchema); err != nil {
			errs = append(errs, err)
		}
		e.sources[name] = append([]byte(nil), opts.DefaultSchema...)
	case len(schemas) == 0:
		errs = append(errs, fmt.Errorf("%w in %s: a policy directory needs exactly one %s file, against which every policy is checked; copy %s (shipped with browsergate) into it",
			ErrNoSchema, dir, "*"+SchemaExt, ShippedSchema))
	case len(schemas) == 1:
		e.schemaFile = filepath.Join(dir, schemas[0])
		src, err := os.ReadFile(e.schemaFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("cedar: read %s: %w", e.schemaFile, err))
		} else if e.validator, err = loadSchema(e.schemaFile, src); err != nil {
			errs = append(errs, err)
		}
		e.sources[schemas[0]] = src
	default:
		errs = append(errs, fmt.Errorf("%w: %s holds %d schema files (%s); keep exactly one",
			ErrSchema, dir, len(schemas), strings.Join(schemas, ", ")))
	}
	if e.validator != nil {
		errs = append(errs, e.checkShapes(opts.Shapes)...)
	}
	var policyErrs []error
	for _, name := range names {
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			policyErrs = append(policyErrs, fmt.Errorf("cedar: read %s: %w", path, err))
			continue
		}
		e.sources[name] = src
		policyErrs = append(policyErrs, e.addFile(path, name, src)...)
	}
	errs = append(errs, policyErrs...)
	if len(e.infos) == 0 && len(policyErrs) == 0 {
		errs = append(errs, fmt.Errorf("%w in %s (no *.cedar file with a policy; deny-by-default would refuse every command)", ErrNoPolicies, dir))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return e, nil
}

// addFile parses one file's policies, validates each against the schema
// (when it loaded) and adds them under their ids. It returns every problem
// found rather than stopping at the first.
func (e *Engine) addFile(path, name string, src []byte) []error {
	list, err := cedargo.NewPolicyListFromBytes(path, src)
	if err != nil {
		return []error{newParseError(path, src, err)}
	}
	var errs []error
	for i, p := range list {
		pos := p.Position()
		id := fmt.Sprintf("%s:%d", name, pos.Line)
		if v, ok := p.Annotations()["id"]; ok {
			id = string(v)
			if strings.TrimSpace(id) == "" {
				errs = append(errs, &ParseError{File: path, Line: pos.Line, Column: pos.Column, Msg: "empty @id annotation"})
				continue
			}
		}
		info := PolicyInfo{ID: id, File: path, Line: pos.Line, Effect: effectName(p.Effect())}
		if e.validator != nil {
			end := len(src)
			if i+1 < len(list) {
				end = list[i+1].Position().Offset
			}
			errs = append(errs, validatePolicy(e.validator, info, p, src, pos.Offset, end)...)
		}
		pid := cedargo.PolicyID(id)
		if prev, dup := e.index[pid]; dup {
			errs = append(errs, fmt.Errorf("%s: %w %q (already used at %s)", info.Location(), ErrDuplicateID, id, e.infos[prev].Location()))
			continue
		}
		e.index[pid] = len(e.infos)
		e.infos = append(e.infos, info)
		e.set.Add(pid, p)
	}
	return errs
}

func effectName(e cedargo.Effect) string {
	if e == cedargo.Forbid {
		return "forbid"
	}
	return "permit"
}

// Policies lists the loaded policies in load order (files sorted by name,
// then position in the file). The slice is a copy the caller may keep.
func (e *Engine) Policies() []PolicyInfo {
	if e == nil {
		return nil
	}
	return append([]PolicyInfo(nil), e.infos...)
}

// Sources returns the bytes of the files the engine was loaded from (the
// schema and every policy file), by file name: enough to load the same
// engine again elsewhere, as an evidence replay does. The map is a copy.
func (e *Engine) Sources() map[string][]byte {
	if e == nil {
		return nil
	}
	out := make(map[string][]byte, len(e.sources))
	for k, v := range e.sources {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

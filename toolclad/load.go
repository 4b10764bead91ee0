package toolclad

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// toolNamePattern keeps tool names usable in MCP tool names and in the
// "<tool>_<command>" form some LLM APIs require.
var toolNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// riskTiers are ToolClad's risk tiers, lowest first.
var riskTiers = []string{"low", "medium", "high", "critical"}

// stateFields are the page-state fields the executor can observe.
var stateFields = []string{"url", "title", "domain", "has_forms", "is_authenticated", "page_loaded", "tab_count"}

// Load reads and validates the manifest at path. A manifest that is wrong in
// any way yields a *LoadError listing every problem; a file that cannot be
// read yields the os error, wrapped.
func Load(path string) (*Manifest, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load manifest: %w", err)
	}
	return Parse(path, doc)
}

// Parse validates a manifest held in memory; name is used in problems as the
// file name. Load is Parse on a file's contents.
func Parse(name string, doc []byte) (*Manifest, error) {
	var root map[string]any
	if err := toml.Unmarshal(doc, &root); err != nil {
		return nil, &LoadError{Problems: []Problem{syntaxProblem(name, err)}}
	}
	r := &reader{file: name, pos: indexPositions(doc)}
	m := decodeManifest(r, root)
	m.Path = name
	m.Source = append([]byte(nil), doc...)
	if len(r.problems) > 0 {
		sortProblems(r.problems)
		return nil, &LoadError{Problems: r.problems}
	}
	return m, nil
}

// LoadFiles loads several manifests, reporting the problems of all of them
// together, and also tool names that two manifests share (their MCP tools
// would collide).
func LoadFiles(paths []string) ([]*Manifest, error) {
	var (
		out      []*Manifest
		problems []Problem
		seen     = make(map[string]string)
	)
	for _, p := range paths {
		m, err := Load(p)
		var le *LoadError
		switch {
		case errors.As(err, &le):
			problems = append(problems, le.Problems...)
			continue
		case err != nil:
			return nil, err
		}
		if first, dup := seen[m.Tool.Name]; dup {
			problems = append(problems, Problem{
				File: p, Line: 1, Col: 1, Key: "tool.name",
				Message: fmt.Sprintf("tool name %q is already used by %s (%v)", m.Tool.Name, first, ErrDuplicateTool),
			})
			continue
		}
		seen[m.Tool.Name] = p
		out = append(out, m)
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	return out, nil
}

func syntaxProblem(name string, err error) Problem {
	p := Problem{File: name, Line: 1, Col: 1, Message: strings.TrimPrefix(err.Error(), "toml: ")}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		// de.Key() is relative to the table being decoded, not a full path,
		// so it is left out; the message names the key.
		p.Line, p.Col = de.Position()
	}
	return p
}

func sortProblems(ps []Problem) {
	// Stable, so problems at one position keep the walk's order.
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && problemLess(ps[j], ps[j-1]); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

func problemLess(a, b Problem) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func decodeManifest(r *reader, root map[string]any) *Manifest {
	m := &Manifest{}
	top := r.table(nil, root)
	hasBrowser := top.has("browser")
	decodeTool(top.sub("tool"), &m.Tool, hasBrowser)
	// Without [browser] or mode = "browser" this is not a browser manifest
	// (already reported): no need to also say that it has no commands.
	toolTable, _ := root["tool"].(map[string]any)
	mode, _ := toolTable["mode"].(string)
	decodeBrowser(top.sub("browser"), m, hasBrowser || mode == "browser")
	decodeOutput(top.sub("output"), m)
	if _, ok := top.get("secrets"); ok { // read, so that a misspelt [secret] is told of [secrets]
		decodeSecrets(top.sub("secrets"), m)
	}
	const other = "not supported in a browser-mode manifest"
	top.doneWith(map[string]string{
		"args":    other + " (declare arguments under [browser.commands.<name>] args)",
		"command": other, "http": other, "mcp": other, "session": other,
	})
	return m
}

func decodeTool(t *table, tool *Tool, hasBrowser bool) {
	if t.m == nil && !t.r.hasProblemAt(t.path) {
		t.r.errorf(keyPath{"tool"}, "missing [tool] table")
	}
	if t.str("name", &tool.Name) {
		if !toolNamePattern.MatchString(tool.Name) {
			t.r.errorf(t.at("name"), "%q does not match ^[a-z][a-z0-9_]*$", tool.Name)
		}
	} else if t.m != nil && !t.has("name") {
		t.r.errorf(t.at("name"), "missing (every tool needs a name)")
	}
	t.str("version", &tool.Version)
	t.str("description", &tool.Description)
	tool.Mode = "browser"
	var mode string
	if t.str("mode", &mode) && mode != "browser" {
		t.r.errorf(t.at("mode"), "mode %q is not supported: browsergate runs only ToolClad's browser mode (mode = \"browser\")", mode)
	} else if !t.has("mode") && !hasBrowser && t.m != nil {
		t.r.errorf(t.path, "not a browser manifest: no mode = \"browser\" and no [browser] table")
	}
	tool.RiskTier = "low"
	t.oneOf("risk_tier", &tool.RiskTier, riskTiers...)
	tool.TimeoutSeconds = 60
	var n int64
	if t.integer("timeout_seconds", &n) {
		if n <= 0 || n > maxSeconds {
			t.r.errorf(t.at("timeout_seconds"), "must be between 1 and %d seconds, got %d", maxSeconds, n)
		} else {
			tool.TimeoutSeconds = int(n)
		}
	}
	t.boolean("human_approval", &tool.HumanApproval)

	cedar := t.sub("cedar")
	tool.Cedar = CedarRef{Resource: "Web::BrowserSession", Action: "browse"}
	if cedar.str("resource", &tool.Cedar.Resource) && tool.Cedar.Resource == "" {
		cedar.r.errorf(cedar.at("resource"), "must not be empty")
	}
	if cedar.str("action", &tool.Cedar.Action) && tool.Cedar.Action == "" {
		cedar.r.errorf(cedar.at("action"), "must not be empty")
	}
	cedar.done()

	decodeEvidence(t.sub("evidence"), &tool.Evidence)
	t.done()
}

// evidenceStore is how the messages below name where evidence goes.
const evidenceStore = "the evidence goes to the daemon's bbolt file (serve --evidence FILE)"

// decodeEvidence reads [tool.evidence]. ToolClad's keys that describe a
// file-per-run evidence directory cannot be honoured by a daemon that
// keeps one hash-chained store, so they are refused rather than ignored:
// an operator who sets them would otherwise believe they work.
func decodeEvidence(t *table, ev *EvidenceConfig) {
	t.boolean("screenshots", &ev.Screenshots)
	if t.str("recording", &ev.Recording) && ev.Recording != RecordingScreencast {
		t.r.errorf(t.at("recording"), "recording %q is not supported: %q keeps the frames the tab painted during each call with its record; a trace of every call is not offered (a browser runs one trace at a time, over all its tabs: the sessions of one browser would fail each other's), performance_trace records one of a page", ev.Recording, RecordingScreencast)
	}
	if _, ok := t.get("output_dir"); ok {
		t.r.errorf(t.at("output_dir"), "is not supported: %s, not to a directory; remove output_dir", evidenceStore)
	}
	var capture bool
	if t.boolean("capture", &capture) && !capture {
		t.r.errorf(t.at("capture"), "capture = false is not supported: %s, which always records every call's output (or its SHA-256 when large); remove capture", evidenceStore)
	}
	var hash string
	if t.str("hash", &hash) && hash != "sha256" {
		t.r.errorf(t.at("hash"), "hash %q is not supported: the evidence chain and each output's digest are SHA-256 (hash = \"sha256\", the default)", hash)
	}
	t.done()
}

func (r *reader) hasProblemAt(path keyPath) bool {
	for _, p := range r.problems {
		if p.Key == path.String() {
			return true
		}
	}
	return false
}

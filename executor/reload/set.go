package reload

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// Set is one loaded configuration: the manifests, in the order of their
// paths, and the policies.
type Set struct {
	Manifests []*toolclad.Manifest
	Policies  *cedar.Engine
	// PolicyTests is how many cases the directory's policy-tests.json
	// holds (all passed), 0 when it has none.
	PolicyTests int
	// Agents is the agents file (serve --agents), nil without one; the
	// Reloader reloads it with the rest.
	Agents *toolclad.Agents
	// Operators is the operator token file (serve --operator-token-file),
	// nil without one; reloaded with the rest too.
	Operators *toolclad.Operators

	files map[string]loadedManifest // by path
}

type loadedManifest struct {
	sum [sha256.Size]byte
	m   *toolclad.Manifest
}

// Load loads the manifests at paths and the policy directory, and runs the
// directory's policy tests. A manifest whose bytes are the same as in prev
// (nil: none) keeps prev's *toolclad.Manifest.
func Load(paths []string, policyDir string, prev *Set) (*Set, error) {
	sums := make(map[string][sha256.Size]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sums[p] = sha256.Sum256(data)
	}
	ms, err := toolclad.LoadFiles(paths)
	if err != nil {
		return nil, err
	}
	files := make(map[string]loadedManifest, len(ms))
	for i := range ms {
		p := paths[i]
		if prev != nil {
			if old, ok := prev.files[p]; ok && old.sum == sums[p] {
				ms[i] = old.m
			}
		}
		files[p] = loadedManifest{sum: sums[p], m: ms[i]}
	}
	engine, err := executor.LoadPolicies(policyDir, ms)
	if err != nil {
		return nil, err
	}
	n, err := RunPolicyTests(engine, policyDir)
	if err != nil {
		return nil, err
	}
	return &Set{Manifests: ms, Policies: engine, PolicyTests: n, files: files}, nil
}

// RunPolicyTests runs DIR/policy-tests.json against engine when there is
// one, and returns how many cases it holds. Any failing case is an error
// that lists every failure with its file and line.
func RunPolicyTests(engine *cedar.Engine, dir string) (int, error) {
	path := filepath.Join(dir, cedar.PolicyTestsFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	results, err := engine.RunTests(path)
	if err != nil {
		return 0, err
	}
	var failed []error
	for _, r := range results {
		if !r.Passed {
			failed = append(failed, fmt.Errorf("%s:%d: policy test %q failed: %s", path, r.Line, r.Name, r.Problem))
		}
	}
	return len(results), errors.Join(failed...)
}

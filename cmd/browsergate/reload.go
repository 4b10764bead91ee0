package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// reloader loads the manifests and the policy directory as one set and
// swaps it in whole, or not at all: a set that does not load, whose
// policies fail their own tests, or whose tool names clash is refused and
// logged, and the previous set keeps serving.
type reloader struct {
	manifestPaths []string
	policyDir     string
	ex            *executor.Executor
	tools         *toolclad.ToolSet
	logger        *slog.Logger

	mu      sync.Mutex
	current map[string]loadedManifest // by path
	seen    [sha256.Size]byte         // fingerprint of the files at the last load (--watch)
}

type loadedManifest struct {
	sum [sha256.Size]byte
	m   *toolclad.Manifest
}

// loadSet loads the manifests and the policies and runs the directory's
// policy tests. unchanged manifests (same bytes as in current) keep their
// old *Manifest, so the executor keeps their sessions.
func loadSet(paths []string, policyDir string, current map[string]loadedManifest) ([]*toolclad.Manifest, map[string]loadedManifest, *cedar.Engine, error) {
	sums := make(map[string][sha256.Size]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, nil, err
		}
		sums[p] = sha256.Sum256(data)
	}
	ms, err := toolclad.LoadFiles(paths)
	if err != nil {
		return nil, nil, nil, err
	}
	next := make(map[string]loadedManifest, len(ms))
	for i := range ms {
		p := paths[i]
		if old, ok := current[p]; ok && old.sum == sums[p] {
			ms[i] = old.m
		}
		next[p] = loadedManifest{sum: sums[p], m: ms[i]}
	}
	engine, err := cedar.LoadDir(policyDir)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := runPolicyTests(engine, policyDir); err != nil {
		return nil, nil, nil, err
	}
	return ms, next, engine, nil
}

// runPolicyTests runs DIR/policy-tests.json when there is one; any failing
// case is an error listing every failure.
func runPolicyTests(engine *cedar.Engine, dir string) error {
	path := filepath.Join(dir, cedar.PolicyTestsFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	results, err := engine.RunTests(path)
	if err != nil {
		return err
	}
	var failed []error
	for _, r := range results {
		if !r.Passed {
			failed = append(failed, fmt.Errorf("%s:%d: policy test %q failed: %s", path, r.Line, r.Name, r.Problem))
		}
	}
	return errors.Join(failed...)
}

// policyTestCount is how many cases DIR/policy-tests.json holds (0 when
// there is none), for check's summary once they have passed.
func policyTestCount(engine *cedar.Engine, dir string) int {
	results, err := engine.RunTests(filepath.Join(dir, cedar.PolicyTestsFile))
	if err != nil {
		return 0
	}
	return len(results)
}

// reload loads the set again and swaps it in. why says what asked for it.
func (r *reloader) reload(why string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	fp, _ := r.fingerprint()
	ms, next, engine, err := loadSet(r.manifestPaths, r.policyDir, r.current)
	if err == nil {
		err = r.tools.Check(ms)
	}
	if err == nil {
		err = r.ex.Reload(ms, engine)
	}
	if err != nil {
		r.seen = fp // do not retry the same broken files on every tick
		r.logger.Error("reload refused; the previous manifests and policies keep serving", "trigger", why, "error", err.Error())
		return err
	}
	if err := r.tools.Set(ms); err != nil { // checked above; cannot fail
		r.logger.Error("reload: updating the tool list failed", "error", err.Error())
	}
	changed := 0
	for p, lm := range next {
		if r.current[p].m != lm.m {
			changed++
		}
	}
	r.current, r.seen = next, fp
	r.logger.Info("reloaded", "trigger", why, "manifests", len(ms), "changed_manifests", changed, "policies", len(engine.Policies()))
	return nil
}

// fingerprint hashes the contents of every manifest and of every regular
// file in the policy directory, so that --watch sees any change, however
// quick, and no change twice.
func (r *reloader) fingerprint() ([sha256.Size]byte, error) {
	h := sha256.New()
	files := slices.Clone(r.manifestPaths)
	entries, err := os.ReadDir(r.policyDir)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join(r.policyDir, e.Name()))
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			data = []byte("unreadable: " + err.Error())
		}
		sum := sha256.Sum256(data)
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(sum[:])
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}

// watch reloads whenever the files change, checking every interval.
func (r *reloader) watch(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		fp, err := r.fingerprint()
		r.mu.Lock()
		same := err == nil && bytes.Equal(fp[:], r.seen[:])
		r.mu.Unlock()
		if err == nil && !same {
			r.reload("files changed")
		}
	}
}

package reload

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/toolclad"
)

// Executor is what a reload swaps the set into (*executor.Executor).
type Executor interface {
	// Reload swaps in the manifests and policies, all or nothing.
	Reload(ms []*toolclad.Manifest, policies *cedar.Engine) error
}

// Tools is the daemon's MCP tool list (*toolclad.ToolSet).
type Tools interface {
	// Check reports whether the manifests' tools can be published
	// (no two with one name), changing nothing.
	Check(ms []*toolclad.Manifest) error
	// Set publishes the manifests' tools.
	Set(ms []*toolclad.Manifest) error
}

// Config is what a Reloader reloads and into what.
type Config struct {
	Manifests []string // manifest paths, as given to serve (required)
	Policies  string   // the policy directory (required)
	Agents    string   // the agents file (serve --agents), "" without one
	Operators string   // the operator token file (serve --operator-token-file), "" without one
	Executor  Executor // required
	Tools     Tools    // required
	Current   *Set     // the set the daemon started with (required)
	Logger    *slog.Logger
}

// Reloader reloads the set on demand (Reload) or when the files change
// (Watch). It is safe for concurrent use; reloads run one at a time.
type Reloader struct {
	cfg    Config
	logger *slog.Logger

	mu      sync.Mutex
	current *Set
	seen    [sha256.Size]byte // fingerprint of the files at the last attempt
}

// New returns a Reloader serving cfg.Current. The files as they are now
// count as seen: Watch reloads on the next change, not at once.
func New(cfg Config) (*Reloader, error) {
	if len(cfg.Manifests) == 0 || cfg.Policies == "" || cfg.Executor == nil || cfg.Tools == nil || cfg.Current == nil {
		return nil, errors.New("reload: manifests, policies, executor, tools and the current set are required")
	}
	r := &Reloader{cfg: cfg, logger: cfg.Logger, current: cfg.Current}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	r.seen, _ = r.fingerprint()
	return r, nil
}

// Current is the set now serving.
func (r *Reloader) Current() *Set {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// Reload loads the set again and swaps it in. why says what asked for it
// (logged). On any error nothing changes and the error is returned.
func (r *Reloader) Reload(why string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	fp, _ := r.fingerprint()
	next, err := Load(r.cfg.Manifests, r.cfg.Policies, r.current)
	if err == nil && r.cfg.Agents != "" {
		next.Agents, err = toolclad.LoadAgents(r.cfg.Agents)
	}
	if err == nil && r.cfg.Operators != "" {
		if next.Operators, err = toolclad.LoadOperators(r.cfg.Operators); err == nil {
			err = toolclad.CheckApart(next.Operators, next.Agents)
		}
	}
	if err == nil {
		err = r.cfg.Tools.Check(next.Manifests)
	}
	if err == nil {
		err = r.cfg.Executor.Reload(next.Manifests, next.Policies)
	}
	if err != nil {
		r.seen = fp // do not retry the same broken files on every tick
		r.logger.Error("reload refused; the previous manifests and policies keep serving", "trigger", why, "error", err.Error())
		return err
	}
	if err := r.cfg.Tools.Set(next.Manifests); err != nil { // checked above; cannot fail
		r.logger.Error("reload: updating the tool list failed", "error", err.Error())
	}
	changed := 0
	for p, lm := range next.files {
		if r.current.files[p].m != lm.m {
			changed++
		}
	}
	r.current, r.seen = next, fp
	r.logger.Info("reloaded", "trigger", why, "manifests", len(next.Manifests), "changed_manifests", changed, "policies", len(next.Policies.Policies()))
	return nil
}

// Watch reloads whenever the files' contents change, checking every
// interval, until ctx ends. A change is seen however quickly it is made
// (contents are hashed, not timestamps compared), and the same contents
// are never tried twice, whether they loaded or not.
func (r *Reloader) Watch(ctx context.Context, interval time.Duration) {
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
		same := err == nil && fp == r.seen
		r.mu.Unlock()
		if err == nil && !same {
			r.Reload("files changed")
		}
	}
}

// fingerprint hashes the contents of every manifest and of every regular
// file in the policy directory.
func (r *Reloader) fingerprint() ([sha256.Size]byte, error) {
	h := sha256.New()
	files := slices.Clone(r.cfg.Manifests)
	for _, f := range []string{r.cfg.Agents, r.cfg.Operators} {
		if f != "" {
			files = append(files, f)
		}
	}
	entries, err := os.ReadDir(r.cfg.Policies)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join(r.cfg.Policies, e.Name()))
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

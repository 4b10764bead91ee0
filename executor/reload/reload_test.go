package reload_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor/reload"
	"github.com/browsergate/browsergate/toolclad"
)

const manifestA = `
[tool]
name = "a"
[browser.scope]
allowed_domains = ["a.example"]
[browser.commands.navigate]
`

const manifestB = `
[tool]
name = "b"
[browser.scope]
allowed_domains = ["b.example"]
[browser.commands.navigate]
`

// fakeExecutor records the sets swapped into it; err, when set, refuses.
type fakeExecutor struct {
	mu    sync.Mutex
	err   error
	swaps [][]*toolclad.Manifest
	got   chan struct{}
}

func (f *fakeExecutor) Reload(ms []*toolclad.Manifest, policies *cedar.Engine) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if policies == nil {
		return errors.New("no policies")
	}
	f.swaps = append(f.swaps, ms)
	if f.got != nil {
		f.got <- struct{}{}
	}
	return nil
}

func (f *fakeExecutor) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.swaps)
}

// fakeTools is a tool list; checkErr, when set, refuses a set.
type fakeTools struct {
	checkErr error
	set      [][]*toolclad.Manifest
}

func (f *fakeTools) Check([]*toolclad.Manifest) error { return f.checkErr }
func (f *fakeTools) Set(ms []*toolclad.Manifest) error {
	f.set = append(f.set, ms)
	return nil
}

// daemon is a loaded set on disk with a reloader over fakes.
type daemon struct {
	dir, policies string
	manifests     []string
	ex            *fakeExecutor
	tools         *fakeTools
	r             *reload.Reloader
}

func newDaemon(t *testing.T) *daemon {
	t.Helper()
	d := &daemon{dir: t.TempDir(), ex: &fakeExecutor{}, tools: &fakeTools{}}
	d.policies = filepath.Join(d.dir, "policies")
	copyDir(t, filepath.Join("..", "..", "policies"), d.policies)
	// In this order: the tests edit d.manifests[0] as a.toml, [1] as b.toml.
	for _, f := range []struct{ name, src string }{{"a.toml", manifestA}, {"b.toml", manifestB}} {
		p := filepath.Join(d.dir, f.name)
		write(t, p, f.src)
		d.manifests = append(d.manifests, p)
	}
	set, err := reload.Load(d.manifests, d.policies, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.r, err = reload.New(reload.Config{Manifests: d.manifests, Policies: d.policies, Executor: d.ex, Tools: d.tools, Current: set})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLoadRunsThePolicyTests(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	set := d.r.Current()
	if len(set.Manifests) != 2 || set.Policies == nil || set.PolicyTests == 0 {
		t.Fatalf("loaded set: %d manifests, policies %v, %d policy tests", len(set.Manifests), set.Policies != nil, set.PolicyTests)
	}
	// A case that no longer holds refuses the set, naming file and line.
	tests := filepath.Join(d.policies, cedar.PolicyTestsFile)
	data, err := os.ReadFile(tests)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), `"expect": "allow"`, `"expect": "deny"`, 1)
	if broken == string(data) {
		t.Fatal("the shipped policy tests have no allow case to break")
	}
	write(t, tests, broken)
	_, err = reload.Load(d.manifests, d.policies, nil)
	if err == nil || !strings.Contains(err.Error(), tests+":") || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("Load with a failing policy test: %v", err)
	}
	// Without a tests file there is nothing to run.
	os.Remove(tests)
	if n, err := reload.RunPolicyTests(set.Policies, d.policies); n != 0 || err != nil {
		t.Fatalf("RunPolicyTests without a file: %d, %v", n, err)
	}
}

func TestReloadKeepsUnchangedManifests(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	before := d.r.Current()
	write(t, d.manifests[1], manifestB+"[browser.commands.snapshot]\n")
	if err := d.r.Reload("test"); err != nil {
		t.Fatal(err)
	}
	after := d.r.Current()
	if after == before || d.ex.count() != 1 || len(d.tools.set) != 1 {
		t.Fatalf("reload did not swap: %d executor swaps, %d tool lists", d.ex.count(), len(d.tools.set))
	}
	if after.Manifests[0] != before.Manifests[0] {
		t.Error("the unchanged manifest was loaded anew: its sessions would end")
	}
	if after.Manifests[1] == before.Manifests[1] || after.Manifests[1].Command("snapshot") == nil {
		t.Error("the edited manifest was not reloaded")
	}
}

func TestRefusedReloadKeepsTheOldSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spoil func(d *daemon)
		want  string
	}{
		{"manifest does not load", func(d *daemon) { write(t, d.manifests[0], manifestA+"[browser.commands.fly]\n") }, "fly"},
		{"policy does not parse", func(d *daemon) {
			write(t, filepath.Join(d.policies, "broken.cedar"), "permit (principal, action, resource\n")
		}, "broken.cedar"},
		{"tool names clash", func(d *daemon) { d.tools.checkErr = errors.New("tool a.navigate declared twice") }, "declared twice"},
		{"executor refuses", func(d *daemon) { d.ex.err = errors.New("scope does not compile") }, "scope does not compile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDaemon(t)
			before := d.r.Current()
			tc.spoil(d)
			err := d.r.Reload("test")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reload: %v, want an error naming %q", err, tc.want)
			}
			if d.r.Current() != before || d.ex.count() != 0 || len(d.tools.set) != 0 {
				t.Fatalf("a refused reload changed something: %d executor swaps, %d tool lists", d.ex.count(), len(d.tools.set))
			}
		})
	}
}

func TestWatchReloadsOnEditOnce(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.ex.got = make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.r.Watch(ctx, 5*time.Millisecond)

	// Nothing changed: no reload.
	select {
	case <-d.ex.got:
		t.Fatal("Watch reloaded files that did not change")
	case <-time.After(50 * time.Millisecond):
	}
	// An edit, even one that keeps the file's size and time, is seen.
	fi, _ := os.Stat(d.manifests[0])
	write(t, d.manifests[0], strings.Replace(manifestA, "a.example", "c.example", 1))
	os.Chtimes(d.manifests[0], fi.ModTime(), fi.ModTime())
	select {
	case <-d.ex.got:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not reload an edited manifest")
	}
	// ... and reloaded once.
	select {
	case <-d.ex.got:
		t.Fatal("Watch reloaded the same edit twice")
	case <-time.After(50 * time.Millisecond):
	}
	// A broken edit is tried once, refused, and not retried.
	write(t, filepath.Join(d.policies, "broken.cedar"), "permit (\n")
	time.Sleep(50 * time.Millisecond)
	if got := d.r.Current().Manifests[0].Browser.Scope.AllowedDomains; len(got) != 1 || got[0] != "c.example" {
		t.Errorf("after the reload the set allows %v", got)
	}
	if n := d.ex.count(); n != 1 {
		t.Errorf("%d swaps, want 1", n)
	}
}

func TestNewNeedsItsParts(t *testing.T) {
	t.Parallel()
	if _, err := reload.New(reload.Config{}); err == nil {
		t.Fatal("New with an empty config succeeded")
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(to, e.Name()), string(data))
	}
}

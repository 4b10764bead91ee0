package executor

import (
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestRemoteBackendsShareTheManifestsLimiter: a remote manifest has a
// backend per pool host (cdp-url) or per session (selenium), and
// requests_per_second_per_host holds for all its sessions together, so
// its backends share one request limiter; another manifest has its own.
func TestRemoteBackendsShareTheManifestsLimiter(t *testing.T) {
	t.Parallel()
	grid := testkit.Manifest(t, `[tool]
name = "grid"
[browser]
connect = "remote"
[browser.remote]
provider = "selenium"
url = "http://10.77.1.2:4444"
pool_cidrs = ["10.77.1.0/24"]
[browser.scope]
allowed_domains = ["example.test"]
requests_per_second_per_host = 2
[browser.commands.navigate]
`)
	other := testkit.Manifest(t, `[tool]
name = "other"
[browser.scope]
allowed_domains = ["example.test"]
requests_per_second_per_host = 2
[browser.commands.navigate]
`)
	e, err := New(Config{Manifests: []*toolclad.Manifest{grid, other}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	e.mu.Lock()
	a, b, c := e.backendLocked(grid), e.backendLocked(grid), e.backendLocked(other)
	e.mu.Unlock()
	if a == b {
		t.Fatal("two sessions of a selenium manifest share a backend")
	}
	if a.hostLimiter() != b.hostLimiter() {
		t.Error("the backends of one remote manifest have request limiters of their own")
	}
	if c.hostLimiter() == a.hostLimiter() {
		t.Error("another manifest shares the remote manifest's request limiter")
	}
}

package cedar_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
)

// shippedDir is the real default policy directory the daemon ships.
const shippedDir = "../policies"

// fixedTime keeps decisions deterministic (no policy here reads the time,
// but the request must not depend on the clock).
var fixedTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func loadShipped(t testing.TB) *cedar.Engine {
	t.Helper()
	e, err := cedar.LoadDir(shippedDir)
	if err != nil {
		t.Fatalf("LoadDir(%s): %v", shippedDir, err)
	}
	return e
}

// writeDir creates a temporary policy directory holding files.
func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func loadFiles(t testing.TB, files map[string]string) *cedar.Engine {
	t.Helper()
	e, err := cedar.LoadDir(writeDir(t, files))
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	return e
}

// baseRequest is a complete request, as the executor builds it, for an
// unauthenticated page on an allowed domain; tests change what they test.
func baseRequest(command string) *cedar.Request {
	return &cedar.Request{
		Principal:    "agent-1",
		Action:       "browse",
		ResourceType: "Web::BrowserSession",
		Session:      "s1",
		Tool:         "chrome_live",
		Command:      command,
		Args:         map[string]any{},
		URL:          "https://docs.example.com/",
		URLDomain:    "docs.example.com",
		DomainSets:   []string{"allowed"},
		PageState: map[string]any{
			"url": "https://docs.example.com/", "title": "Docs", "domain": "docs.example.com",
			"has_forms": true, "is_authenticated": false, "page_loaded": true, "tab_count": 1,
		},
		RiskTier:         "medium",
		InteractionCount: 3,
		Counters:         map[string]int{"session_submit_count": 0},
		Time:             fixedTime,
	}
}

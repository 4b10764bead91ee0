package cedar_test

import (
	"os"
	"path/filepath"
	"strings"
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

// shippedSchema is the schema file the daemon ships; withSchema copies it
// into test directories.
var shippedSchema = filepath.Join(shippedDir, "browsergate.cedarschema")

// withSchema returns files plus the shipped schema, unless files already
// hold a *.cedarschema of their own.
func withSchema(t testing.TB, files map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	own := false
	for name, body := range files {
		out[name] = body
		own = own || strings.HasSuffix(name, cedar.SchemaExt)
	}
	if !own {
		b, err := os.ReadFile(shippedSchema)
		if err != nil {
			t.Fatal(err)
		}
		out["browsergate.cedarschema"] = string(b)
	}
	return out
}

// writeDir creates a temporary policy directory holding exactly files.
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

// loadFiles loads a directory holding files and, unless they bring their
// own, the shipped schema.
func loadFiles(t testing.TB, files map[string]string) *cedar.Engine {
	t.Helper()
	e, err := cedar.LoadDir(writeDir(t, withSchema(t, files)))
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	return e
}

// commands are the built-in commands; the executor sends a
// session_<command>_count counter for each.
var commands = []string{"navigate", "snapshot", "click", "type_text", "submit_form", "screenshot",
	"go_back", "wait_for", "extract_html", "list_tabs", "execute_js", "scroll", "network_timing",
	"switch_tab", "new_tab", "close_tab", "press_key", "select_option", "hover", "go_forward", "reload", "handle_dialog", "read", "console_messages", "network_log", "upload_file", "download", "save_pdf",
	"await_human", "fetch_page", "search_web", "download_file", "network_requests", "network_request", "find", "accessibility_audit", "performance_trace", "drag", "fill_form", "emulate", "save_storage_state", "load_storage_state", "new_context", "switch_context"}

// zeroCounters is every counter the schema declares, at 0.
func zeroCounters() map[string]int {
	c := map[string]int{"session_submit_count": 0}
	for _, cmd := range commands {
		c["session_"+cmd+"_count"] = 0
	}
	return c
}

// baseRequest is a complete request, as the executor builds it, for an
// unauthenticated page on an allowed domain; it conforms to the shipped
// schema. Tests change what they test.
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
		Counters:         zeroCounters(),
		Time:             fixedTime,
	}
}

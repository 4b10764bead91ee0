package toolclad_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// designDocManifest declares the commands with continuations the way
// ToolClad's browser-mode document declares snapshot (an optional
// selector, nothing else), so every continuation is undeclared.
const designDocManifest = `
[tool]
name = "docs"
mode = "browser"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.snapshot]
description = "Get accessibility tree snapshot of the current page"
args.selector = { type = "string", required = false, description = "Optional CSS selector to scope the snapshot" }
[browser.commands.read]
args.mode = { type = "enum", allowed = ["main"] }
[browser.commands.console_messages]
args.level = { type = "enum", allowed = ["error"] }
[browser.commands.network_log]
[browser.commands.new_tab]
[browser.commands.download]
[browser.files]
download_dir = "."
`

// TestContinuationsAreTakenUndeclared proves that a command whose
// manifest declares its arguments without its continuation still takes
// it, with the built-in bounds, publishes it in its input schema, and
// still refuses what the declaration left out.
func TestContinuationsAreTakenUndeclared(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("docs.toml", []byte(designDocManifest))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, tc := range []struct {
		command, arg string
		value, over  int64
	}{
		{"snapshot", "page", 10000, 10001},
		{"read", "page", 2, 0},
		{"console_messages", "since", 1 << 40, -1},
	} {
		c := m.Command(tc.command)
		if _, err := c.Validate(map[string]any{tc.arg: float64(tc.value)}); err != nil {
			t.Errorf("%s {%s: %d} refused: %v", tc.command, tc.arg, tc.value, err)
		}
		if _, err := c.Validate(map[string]any{tc.arg: float64(tc.over)}); err == nil {
			t.Errorf("%s {%s: %d} accepted: the built-in bounds apply", tc.command, tc.arg, tc.over)
		}
		props, _ := c.InputSchema()["properties"].(map[string]any)
		if _, ok := props[tc.arg]; !ok {
			t.Errorf("%s's input schema lacks %s: %v", tc.command, tc.arg, props)
		}
	}
	// A declared argument set still narrows the rest: snapshot's
	// max_chars sizes a reply, it does not continue one.
	if _, err := m.Command("snapshot").Validate(map[string]any{"max_chars": float64(5000)}); err == nil {
		t.Error("snapshot {max_chars} accepted though the manifest declares only selector")
	}
	if _, err := m.Command("read").Validate(map[string]any{"mode": "raw"}); err == nil {
		t.Error(`read {mode: "raw"} accepted though the manifest allows only "main"`)
	}
}

// TestContinuationDeclarationOnlyDescribes proves a continuation may be
// declared with its type, required = false and a description (as ToolClad
// writes arguments), and that the description is published.
func TestContinuationDeclarationOnlyDescribes(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("c.toml", []byte(`
[tool]
name = "c"
mode = "browser"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.snapshot]
args.page = { type = "integer", required = false, description = "The next part" }
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c := m.Command("snapshot")
	if a := c.Arg("page"); a == nil || a.Description != "The next part" || *a.Max != 10000 || a.Required {
		t.Errorf("declared page = %+v", a)
	}
	if c.Arg("selector") != nil {
		t.Error("declaring only page kept selector")
	}
}

// TestDownloadsRefuseADestination proves that an agent passing
// wcore-browser's dest_path or GAIA's save_to is told why they are not
// taken, not only that they are unknown.
func TestDownloadsRefuseADestination(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("docs.toml", []byte(designDocManifest))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, arg := range []string{"dest_path", "save_to"} {
		_, err := m.Command("download").Validate(map[string]any{"url": "https://example.com/a.pdf", arg: "/tmp"})
		var ae *toolclad.ArgError
		if !errors.As(err, &ae) || ae.Arg != arg || !strings.Contains(ae.Message, "download does not take "+arg) ||
			!strings.Contains(ae.Message, "download_dir") {
			t.Errorf("download {%s} refused with %v, want why a destination is not taken", arg, err)
		}
	}
}

// TestNewTabWithoutURL proves new_tab may be called without a URL (a
// blank tab), as wcore-browser's new_tab is.
func TestNewTabWithoutURL(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("docs.toml", []byte(designDocManifest))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	args, err := m.Command("new_tab").Validate(map[string]any{})
	if err != nil || len(args) != 0 {
		t.Errorf("new_tab {} = %v, %v", args, err)
	}
}

// TestReadModeNames proves wcore-browser's names for read's modes are
// accepted and read as main.
func TestReadModeNames(t *testing.T) {
	t.Parallel()
	c := wholeCommand(t, "cdp-direct", "read")
	for mode, want := range map[string]string{"": "main", "main": "main", "main_content": "main", "article": "main", "raw": "raw"} {
		if mode != "" {
			if _, err := c.Validate(map[string]any{"mode": mode}); err != nil {
				t.Errorf("read {mode: %q} refused: %v", mode, err)
			}
		}
		if got := toolclad.ReadMode(mode); got != want {
			t.Errorf("ReadMode(%q) = %q, want %q", mode, got, want)
		}
	}
}

// TestClamped proves Clamped names exactly the arguments Validate brought
// to a bound, with the value asked for.
func TestClamped(t *testing.T) {
	t.Parallel()
	c := wholeCommand(t, "http", "fetch_page")
	raw := map[string]any{"url": "https://example.com/", "max_length": float64(50000)}
	args, err := c.Validate(raw)
	if err != nil || args["max_length"] != int64(20000) {
		t.Fatalf("max_length 50000 = %v, %v; want clamped to 20000", args["max_length"], err)
	}
	if got := c.Clamped(raw); len(got) != 1 || got["max_length"] != 50000 {
		t.Errorf("Clamped = %v, want max_length 50000", got)
	}
	for _, n := range []float64{100, 20000} {
		if got := c.Clamped(map[string]any{"max_length": n}); got != nil {
			t.Errorf("Clamped(max_length %v) = %v, want none", n, got)
		}
	}
	if got := c.Clamped(map[string]any{"max_length": "50000"}); got != nil {
		t.Errorf("Clamped of a string = %v, want none (Validate refuses it)", got)
	}
}

// wholeCommand is a command declared with no arguments of its own: its
// whole built-in signature.
func wholeCommand(t *testing.T, engine, name string) *toolclad.Command {
	t.Helper()
	m, err := toolclad.Parse("whole.toml", []byte(`
[tool]
name = "w"
mode = "browser"
[browser]
engine = "`+engine+`"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.`+name+`]
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m.Command(name)
}

package toolclad_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/toolclad"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestLoadBad proves that each broken manifest is refused with exactly the
// problems in its golden file: every problem, each with file, line, column
// and key.
func TestLoadBad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad manifests: %v", err)
	}
	// A checkout's umask decides the mode a file gets: the credentials
	// file others may read is made so here.
	if err := os.Chmod("testdata/bad/remote-credentials-open.txt", 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, err := toolclad.Load(file)
			if err == nil {
				t.Fatalf("Load(%s) = %+v, want an error", file, m)
			}
			var le *toolclad.LoadError
			if !errors.As(err, &le) || !errors.Is(err, toolclad.ErrInvalidManifest) {
				t.Fatalf("Load(%s) error %T is not a *LoadError", file, err)
			}
			for _, p := range le.Problems {
				if p.File != file || p.Line < 1 || p.Col < 1 {
					t.Errorf("problem without a place: %+v", p)
				}
			}
			golden := strings.TrimSuffix(file, ".toml") + ".golden"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("Load(%s) error:\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}

// TestLoadGood proves that the valid manifests load with the documented
// defaults and the declared values.
func TestLoadGood(t *testing.T) {
	t.Parallel()
	t.Run("minimal gets every default", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, "testdata/good/minimal.toml")
		b := m.Browser
		checks := []struct {
			name      string
			got, want any
		}{
			{"mode", m.Tool.Mode, "browser"},
			{"risk_tier", m.Tool.RiskTier, "low"},
			{"timeout", m.Tool.TimeoutSeconds, 60},
			{"cedar", m.Tool.Cedar, toolclad.CedarRef{Resource: "Web::BrowserSession", Action: "browse"}},
			{"engine", b.Engine, "cdp-direct"},
			{"connect", b.Connect, "launch"},
			{"launch is isolated", b.Context, "isolated"},
			{"headless", b.Headless, true},
			{"extract", b.ExtractMode, "accessibility_tree"},
			{"startup", b.StartupTimeout, 60 * time.Second},
			{"session", b.SessionTimeout, 1800 * time.Second},
			{"idle", b.IdleTimeout, 300 * time.Second},
			{"max", b.MaxInteractions, 100},
			{"exe", b.ExecutablePath, "/usr/bin/chromium"},
			{"live", b.LiveEndpoint, "http://127.0.0.1:9222"},
			{"state", len(b.StateFields), 7},
			{"no scope", len(b.Scope.AllowedDomains), 0},
			{"navigate url", m.Command("navigate").Arg("url").ScopeCheck, true},
			{"command risk", m.Command("navigate").RiskTier, "low"},
			{"undeclared", m.Command("click") == nil, true},
			{"output schema", m.Output.Schema == nil, true},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
	})
	t.Run("full reads every field", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, "testdata/good/full.toml")
		b := m.Browser
		wait := m.Command("wait_for")
		checks := []struct {
			name      string
			got, want any
		}{
			{"version", m.Tool.Version, "2.1.0"},
			{"risk", m.Tool.RiskTier, "high"},
			{"timeout", m.Tool.TimeoutSeconds, 90},
			{"approval", m.Tool.HumanApproval, true},
			{"cedar", m.Tool.Cedar, toolclad.CedarRef{Resource: "Web::Tab", Action: "operate"}},
			{"evidence", m.Tool.Evidence, toolclad.EvidenceConfig{Screenshots: true, Recording: toolclad.RecordingScreencast}},
			{"engine cdp normalised", b.Engine, "cdp-direct"},
			{"connect", b.Connect, "live"},
			{"live is the user's context by default", b.Context, "user"},
			{"headless", b.Headless, false},
			{"extract from defaults", b.ExtractMode, "html"},
			{"startup", b.StartupTimeout, 10 * time.Second},
			{"max", b.MaxInteractions, 7},
			{"exe", b.ExecutablePath, "/opt/chrome/chrome"},
			{"live", b.LiveEndpoint, "ws://127.0.0.1:9333/devtools/browser/abc"},
			{"allowed", strings.Join(b.Scope.AllowedDomains, ","), "*.example.com,docs.example.org"},
			{"blocked", strings.Join(b.Scope.BlockedDomains, ","), "admin.example.com"},
			{"external", b.Scope.AllowExternal, true},
			{"cidrs", strings.Join(b.Scope.AllowPrivateCIDRs, ","), "127.0.0.1/32,::1/128"},
			{"ports", strings.Join(b.Scope.AllowedPorts, ","), "443,8000-8999"},
			{"sets", fmt.Sprint(b.Scope.DomainSets), "map[docs:[docs.example.org] payments:[pay.example.org *.checkout.example.com]]"},
			{"state", strings.Join(b.StateFields, ","), "url,title"},
			{"file order", commandNames(m), "wait_for,scroll,navigate,click,type_text,screenshot"},
			{"wait_for args", argNames(wait), "selector,timeout_ms"},
			{"wait_for selector now required", wait.Arg("selector").Required, true},
			{"selector keeps its type", wait.Arg("selector").Type, toolclad.TypeSelector},
			{"selector max_len", wait.Arg("selector").MaxLen, 64},
			{"timeout min", *wait.Arg("timeout_ms").Min, int64(200)},
			{"timeout default", wait.Arg("timeout_ms").Default, int64(500)},
			{"timeout clamp off", wait.Arg("timeout_ms").Clamp, false},
			{"timeout description", wait.Arg("timeout_ms").Description, "Wait budget"},
			{"wait risk", wait.RiskTier, "medium"},
			{"scroll direction allowed", strings.Join(m.Command("scroll").Arg("direction").Allowed, ","), "down"},
			{"scroll keeps amount", m.Command("scroll").Arg("amount") == nil, true},
			{"schemes lowercased", strings.Join(m.Command("navigate").Arg("url").Schemes, ","), "https"},
			{"click by ref only", argNames(m.Command("click")), "ref"},
			{"click ref required", m.Command("click").Arg("ref").Required, true},
			{"text as enum", m.Command("type_text").Arg("text").Type, toolclad.TypeEnum},
			{"boolean default from string", m.Command("screenshot").Arg("full_page").Default, true},
			{"output format", m.Output.Format, "json"},
			{"output envelope", m.Output.Envelope, false},
			{"output schema", m.Output.Schema["type"], "object"},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
	})
	t.Run("remote reads the pool", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, "testdata/good/remote.toml")
		b := m.Browser
		if b.Connect != toolclad.ConnectRemote || b.Context != toolclad.ContextIsolated || b.Remote == nil {
			t.Fatalf("connect %q, context %q, remote %+v", b.Connect, b.Context, b.Remote)
		}
		r := b.Remote
		if r.Provider != toolclad.ProviderCDPURL || strings.Join(r.Endpoints, ",") != "http://10.0.5.2:9223,ws://10.0.5.3:9223/devtools/browser/abc" ||
			fmt.Sprint(r.PoolCIDRs) != "[10.0.5.0/24 fd00:5::/64]" || r.URL != "" || r.CredentialsFile != "" {
			t.Errorf("remote = %+v", r)
		}
		if mustLoad(t, "testdata/good/minimal.toml").Browser.Remote != nil {
			t.Error("a launched browser's manifest has a remote table")
		}
	})
}

// TestExamplesLoad proves that every shipped example manifest is valid.
func TestExamplesLoad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.toml")
	if err != nil || len(files) < 7 {
		t.Fatalf("want at least 7 examples, got %d (%v)", len(files), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			m := mustLoad(t, file)
			if len(m.Commands) == 0 {
				t.Error("no commands")
			}
		})
	}
	ms, err := toolclad.LoadFiles(files)
	if err != nil {
		t.Fatalf("LoadFiles(examples): %v", err)
	}
	if len(ms) != len(files) {
		t.Errorf("LoadFiles returned %d manifests for %d files", len(ms), len(files))
	}
}

// TestLoadFiles proves that two manifests with one tool name are refused,
// and that problems of several files are reported together.
func TestLoadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.toml")
	b := filepath.Join(dir, "b.toml")
	c := filepath.Join(dir, "c.toml")
	same := "[tool]\nname = \"same\"\n[browser.commands.navigate]\n"
	for path, doc := range map[string]string{a: same, b: same, c: "[tool]\nname = 1\n"} {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := toolclad.LoadFiles([]string{a, b, c})
	var le *toolclad.LoadError
	if !errors.As(err, &le) || len(le.Problems) != 3 {
		t.Fatalf("LoadFiles error = %v, want 3 problems", err)
	}
	if !strings.Contains(err.Error(), b+":1:1: tool.name: tool name \"same\" is already used by "+a) {
		t.Errorf("duplicate not reported: %v", err)
	}
	if _, err := toolclad.LoadFiles([]string{filepath.Join(dir, "missing.toml")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist", err)
	}
}

// FuzzLoad proves that no input makes the loader panic, and that a refusal
// is always a *LoadError with placed problems.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*.toml")
	examples, _ := filepath.Glob("../examples/*.toml")
	for _, s := range append(seeds, examples...) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("[tool]\nname='x'\n[browser.commands.click]\nargs = {}\n"))
	f.Add([]byte("[[browser.commands.navigate]]\n[[browser.commands.navigate]]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := toolclad.Parse("fuzz.toml", doc)
		if err != nil {
			var le *toolclad.LoadError
			if !errors.As(err, &le) || len(le.Problems) == 0 {
				t.Fatalf("error %T %v is not a *LoadError with problems", err, err)
			}
			return
		}
		for _, c := range m.Commands {
			_ = c.InputSchema()
			_, _ = c.Validate(map[string]any{})
		}
	})
}

func mustLoad(t *testing.T, path string) *toolclad.Manifest {
	t.Helper()
	m, err := toolclad.Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return m
}

func commandNames(m *toolclad.Manifest) string {
	var names []string
	for _, c := range m.Commands {
		names = append(names, c.Name)
	}
	return strings.Join(names, ",")
}

func argNames(c *toolclad.Command) string {
	var names []string
	for _, a := range c.Args {
		names = append(names, a.Name)
	}
	return strings.Join(slices.Clip(names), ",")
}

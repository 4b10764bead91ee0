package toolclad

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// toolsListBudget is what the tools list may cost an agent's context, in
// o200k_base tokens per tool: the cost of the 28 commands of the browser
// engine, each declared without args, before the peers' capabilities
// (#37) were added (4,572 tokens for the 28 tools as the MCP SDK lists
// them, measured by this test at 9769cb3).
const toolsListBudget = 4572.0 / 28

// TestToolsListStaysWithinItsTokenBudget: the tools list of a manifest
// that declares every command of the browser engine, each without args,
// costs no more tokens per tool than it did before #37: new commands pay
// for themselves in short words. With every argument declared (the
// opt-in ones too) it costs more, which only a manifest that declares
// them pays; the test logs that figure (docs/peers.md).
func TestToolsListStaysWithinItsTokenBudget(t *testing.T) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, every := range []bool{false, true} {
		m := browserManifest(t, every)
		total := 0
		for _, c := range m.Commands {
			h := &handler{name: ToolName(m, c, ""), manifest: m, command: c}
			b, err := json.Marshal(h.tool())
			if err != nil {
				t.Fatal(err)
			}
			n := len(enc.Encode(string(b), nil, nil))
			total += n
			if os.Getenv("TOKENS_EACH") != "" {
				t.Logf("%s %d", c.Name, n)
			}
		}
		per := float64(total) / float64(len(m.Commands))
		if every {
			t.Logf("%d commands with every argument declared: %d tokens, %.1f per tool", len(m.Commands), total, per)
			continue
		}
		t.Logf("%d commands each declared without args: %d tokens, %.1f per tool (budget %.1f)", len(m.Commands), total, per, toolsListBudget)
		if per > toolsListBudget {
			t.Errorf("%d commands each declared without args cost %.1f tokens per tool in the tools list, more than the budget of %.1f", len(m.Commands), per, toolsListBudget)
		}
	}
}

// everyCommandManifest is browserManifest's manifest without args, kept as
// a file for peerbench's tools scenario, which lists the tools of the
// real binary serving it (docs/peers.md).
const everyCommandManifest = "testdata/every-command.toml"

// TestEveryCommandManifestIsCurrent: the file peerbench measures declares
// every command of the browser engine (regenerate it with -update).
func TestEveryCommandManifestIsCurrent(t *testing.T) {
	got := []byte(browserManifestText(false))
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(everyCommandManifest, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(everyCommandManifest)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not the manifest of every command (%v): run go test ./toolclad -run %s -update", everyCommandManifest, err, t.Name())
	}
}

// browserManifest declares every command of the browser engine: without
// args, or with every built-in argument declared as the built-in has it;
// its file directories are made beside it.
func browserManifest(t *testing.T, every bool) *Manifest {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"up", "down", "state"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "bench.toml")
	if err := os.WriteFile(path, []byte(browserManifestText(every)), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func browserManifestText(every bool) string {
	var b strings.Builder
	b.WriteString("# Every command of the browser engine, for peerbench -scenario tools\n" +
		"# (generated: go test ./toolclad -run TestEveryCommandManifestIsCurrent -update)\n" +
		"[tool]\nname = \"bench\"\nmode = \"browser\"\n[browser]\n[browser.scope]\nallowed_domains = [\"127.0.0.1\"]\n" +
		"# beside the manifest: up, down and state (owner-only)\n" +
		"[browser.files]\nupload_dir = \"up\"\ndownload_dir = \"down\"\nstate_dir = \"state\"\n")
	for _, c := range builtins {
		if c.engine != "" {
			continue
		}
		fmt.Fprintf(&b, "[browser.commands.%s]\n", c.name)
		if every {
			for _, a := range c.args {
				fmt.Fprintf(&b, "args.%s = {}\n", a.Name)
			}
		}
	}
	return b.String()
}

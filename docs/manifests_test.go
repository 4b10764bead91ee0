package docs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// tomlBlock is a fenced TOML block of the manual, its contents in group 1.
var tomlBlock = regexp.MustCompile("(?ms)^```toml\n(.*?)^```")

// tableHeader is a TOML table's header line, its name in group 1.
var tableHeader = regexp.MustCompile(`(?m)^\[([^\]]+)\]`)

// commandsOnly says whether a TOML block declares nothing but commands
// (every table is [browser.commands.…]): such a block is the part of a
// manifest a section is about, and loads inside the smallest manifest.
func commandsOnly(block string) bool {
	tables := tableHeader.FindAllStringSubmatch(block, -1)
	for _, tbl := range tables {
		if !strings.HasPrefix(tbl[1], "browser.commands.") {
			return false
		}
	}
	return len(tables) > 0
}

// aroundCommands is the smallest manifest a block of commands loads in.
const aroundCommands = `[tool]
name = "docs"
description = "a block of commands from the manual"
[browser.scope]
allowed_domains = ["example.com", "*.example.com"]
`

// docManifests returns the manifests the manual shows, keyed by
// "FILE block N": each TOML block that is a whole manifest (it has a
// [tool] table) as it stands, and each block of commands inside
// aroundCommands. Other fragments (a [secrets.…] or [browser.scope] table
// alone) are not manifests and are not loaded.
func docManifests(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rel := range manual(t) {
		for i, m := range tomlBlock.FindAllStringSubmatch(read(t, rel), -1) {
			key := fmt.Sprintf("%s block %d", rel, i+1)
			switch {
			case slices.ContainsFunc(tableHeader.FindAllStringSubmatch(m[1], -1), func(h []string) bool { return h[1] == "tool" }):
				out[key] = m[1]
			case commandsOnly(m[1]):
				out[key] = aroundCommands + m[1]
			}
		}
	}
	return out
}

// TestManualManifestsLoad: every manifest the manual shows, and every
// block of commands it shows, loads: a reader who copies one gets a
// manifest browsergate takes, not a load error.
func TestManualManifestsLoad(t *testing.T) {
	blocks := docManifests(t)
	if len(blocks) < 4 {
		t.Fatalf("found only %d manifests in the manual: is the TOML block pattern still right?", len(blocks))
	}
	for key, doc := range blocks {
		if _, err := toolclad.Parse(key, []byte(doc)); err != nil {
			t.Errorf("%s does not load:\n%v\n%s", key, err, doc)
		}
	}
}

// TestManualAwaitHumanTakesWhatTheProseSays: docs/approval.md's
// await_human declaration takes the arguments the section tells an agent
// to pass (question, secret: true, timeout_seconds), so that an agent
// following the section is not refused for an undeclared argument.
func TestManualAwaitHumanTakesWhatTheProseSays(t *testing.T) {
	var found bool
	for key, doc := range docManifests(t) {
		if !strings.HasPrefix(key, "docs/approval.md ") {
			continue
		}
		m, err := toolclad.Parse(key, []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		c := m.Command("await_human")
		if c == nil {
			continue
		}
		found = true
		if _, err := c.Validate(map[string]any{"question": "Which code did you get?", "secret": true, "timeout_seconds": float64(120)}); err != nil {
			t.Errorf("%s: the await_human the section declares refuses what it tells agents to pass: %v", key, err)
		}
	}
	if !found {
		t.Fatal("docs/approval.md shows no await_human declaration")
	}
}

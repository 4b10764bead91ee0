package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runTools measures what each server's tools list costs an agent's
// context: the o200k_base tokens of every tool as the server lists it
// (name, description, input schema, annotations), in total and per tool.
// browsergate serves toolclad/testdata/every-command.toml (every command of
// the browser engine, declared without args); the peers run with every
// capability they have switched on.
func runTools(repo, peers string) {
	enc := encoding("o200k_base")
	bin := buildBrowsergate(repo)
	evidence := filepath.Join(os.TempDir(), fmt.Sprintf("peerbench-tools-%d.db", os.Getpid()))
	manifest := everyCommandManifest(repo)
	servers := []struct {
		name string
		cmd  *exec.Cmd
	}{
		{"browsergate", exec.Command(bin, "serve", "--manifest", manifest,
			"--policies", filepath.Join(repo, "policies"), "--evidence", evidence, "--log-level", "error")},
		{"playwright-mcp", exec.Command("node", filepath.Join(peers, "node_modules/@playwright/mcp/cli.js"), "--caps", "vision,pdf,devtools")},
		{"chrome-devtools-mcp", exec.Command("node", filepath.Join(peers, "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
			"--no-usage-statistics", "--categoryExtensions")},
	}
	fmt.Println("| server | tools | tokens | tokens per tool |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, s := range servers {
		s.cmd.Dir = peers
		tools, err := listTools(s.cmd)
		if err != nil {
			log.Printf("%s: %v", s.name, err)
			continue
		}
		total := 0
		for _, t := range tools {
			b, err := json.Marshal(t)
			if err != nil {
				log.Fatal(err)
			}
			total += len(enc.Encode(string(b), nil, nil))
		}
		fmt.Printf("| %s | %d | %d | %.1f |\n", s.name, len(tools), total, float64(total)/float64(max(1, len(tools))))
	}
}

// listTools starts a server over stdio and returns its tools list.
func listTools(cmd *exec.Cmd) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "peerbench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// everyCommandManifest copies toolclad/testdata/every-command.toml into a
// directory of the run's own, with the directories it names beside it
// (the state directory owner-only, as browsergate requires).
func everyCommandManifest(repo string) string {
	body, err := os.ReadFile(filepath.Join(repo, "toolclad/testdata/every-command.toml"))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "tools-")
	if err != nil {
		log.Fatal(err)
	}
	for _, sub := range []string{"up", "down", "state"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			log.Fatal(err)
		}
	}
	path := filepath.Join(dir, "every-command.toml")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		log.Fatal(err)
	}
	return path
}

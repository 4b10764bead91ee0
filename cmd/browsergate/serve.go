package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// version is reported to MCP clients.
const version = "0.1.0"

func serve(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var manifests multiFlag
	fs.Var(&manifests, "manifest", "ToolClad manifest (repeatable)")
	policies := fs.String("policies", "", "directory of Cedar policies")
	evidencePath := fs.String("evidence", "", "bbolt evidence file (created if missing)")
	sep := fs.String("tool-separator", ".", `separator in tool names: "." (<tool>.<command>) or "_" for LLM APIs that allow only [A-Za-z0-9_-]`)
	principal := fs.String("principal", "local", "Cedar principal id of the agent (Web::Agent)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error (logs go to stderr)")
	var resolve multiFlag
	fs.Var(&resolve, "resolve", "name=ip[,ip...]: answer for name in the egress proxy instead of DNS (repeatable; tests, air-gapped setups)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(manifests) == 0 || *policies == "" || *evidencePath == "" {
		return fmt.Errorf("%w: serve needs --manifest, --policies and --evidence", errUsage)
	}
	if *sep != "." && *sep != "_" {
		return fmt.Errorf("%w: --tool-separator must be \".\" or \"_\"", errUsage)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %v", errUsage, err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	ms, err := toolclad.LoadFiles(manifests)
	if err != nil {
		return err
	}
	engine, err := cedar.LoadDir(*policies)
	if err != nil {
		return err
	}
	store, err := evidence.Open(*evidencePath, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	var resolver egress.Resolver
	if len(resolve) > 0 {
		static := &egress.StaticResolver{Hosts: map[string][]netip.Addr{}, Fallback: net.DefaultResolver}
		for _, m := range resolve {
			name, addrs, err := egress.ParseHostMapping(m)
			if err != nil {
				return fmt.Errorf("%w: --resolve: %v", errUsage, err)
			}
			static.Hosts[name] = addrs
		}
		resolver = static
	}
	ex, err := executor.New(executor.Config{
		Manifests: ms, Policies: engine, Evidence: store, Principal: *principal, Logger: logger,
		Resolver: resolver,
	})
	if err != nil {
		return err
	}
	defer ex.Close()

	server := mcp.NewServer(&mcp.Implementation{Name: "browsergate", Version: version}, nil)
	if err := toolclad.Register(server, ms, ex, toolclad.RegisterOptions{Separator: *sep}); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("serving MCP on stdio", "manifests", len(ms), "policies", len(engine.Policies()), "evidence", *evidencePath)
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

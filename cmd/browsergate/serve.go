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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/executor/approval"
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
	signingKey := fs.String("signing-key", "", "PKCS #8 PEM ed25519 private key (evidence keygen): sign every session's evidence head")
	sep := fs.String("tool-separator", ".", `separator in tool names: "." (<tool>.<command>) or "_" for LLM APIs that allow only [A-Za-z0-9_-]`)
	principal := fs.String("principal", "local", "Cedar principal id of the agent (Web::Agent)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error (logs go to stderr)")
	approvalsSocket := fs.String("approvals-socket", "", "Unix socket of the operator approval channel (default: FILE.approvals.sock beside --evidence)")
	approvalTimeout := fs.Duration("approval-timeout", executor.DefaultApprovalTimeout, "how long a call waits for a human's approval before it is denied")
	elicitation := fs.Bool("elicitation", false, "also ask for approvals through MCP elicitation when the client supports it: only for a client that puts the question to a human, never one that could answer by itself (critical-tier commands always need the operator)")
	watch := fs.Bool("watch", false, "reload manifests and policies when their files change (SIGHUP always reloads)")
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

	ms, loaded, engine, err := loadSet(manifests, *policies, nil)
	if err != nil {
		return err
	}
	evidenceOpts, err := evidenceOptions(*signingKey)
	if err != nil {
		return err
	}
	store, err := evidence.Open(*evidencePath, evidenceOpts)
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
	if *approvalTimeout <= 0 {
		return fmt.Errorf("%w: --approval-timeout must be positive", errUsage)
	}
	if *approvalsSocket == "" {
		*approvalsSocket = defaultApprovalsSocket(*evidencePath)
	}
	broker := approval.NewBroker(nil)
	ops, err := listenApprovals(*approvalsSocket, broker, logger)
	if err != nil {
		return err
	}
	defer ops.Close()
	ex, err := executor.New(executor.Config{
		Manifests: ms, Policies: engine, Evidence: store, Principal: *principal, Logger: logger,
		Resolver: resolver, Approvals: broker, ApprovalTimeout: *approvalTimeout, Elicitation: *elicitation,
	})
	if err != nil {
		return err
	}
	defer ex.Close()

	server := mcp.NewServer(&mcp.Implementation{Name: "browsergate", Version: version}, nil)
	tools, err := toolclad.NewToolSet(server, ex, toolclad.RegisterOptions{Separator: *sep})
	if err != nil {
		return err
	}
	if err := tools.Set(ms); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rl := &reloader{manifestPaths: manifests, policyDir: *policies, ex: ex, tools: tools, logger: logger, current: loaded}
	rl.seen, _ = rl.fingerprint()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				rl.reload("SIGHUP")
			}
		}
	}()
	if *watch {
		go rl.watch(ctx, time.Second)
	}
	logger.Info("serving MCP on stdio", "manifests", len(ms), "policies", len(engine.Policies()), "evidence", *evidencePath, "approvals", *approvalsSocket)
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

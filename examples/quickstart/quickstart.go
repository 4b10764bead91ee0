package quickstart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/approval/operator"
	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/toolclad"
)

// Config says which browsergate to drive and with what.
type Config struct {
	Binary   string    // the browsergate executable, started as `serve` (required)
	Version  string    // reported by the demo's MCP client
	Manifest string    // the demo manifest (examples/demo.toml)
	Policies string    // the policy directory
	Evidence string    // the evidence file serve writes
	Out      io.Writer // the session, step by step
	Stderr   io.Writer // serve's own logs
}

// Demo is the demo site on 127.0.0.1 and a canary on 127.0.0.2, outside
// the manifest's scope, which must see no request at all.
type Demo struct {
	cfg        Config
	canary     *demosite.NetCanary
	canaryURL  string
	siteURL    string
	stop       []func()
	secrets    map[string]string
	secretArgs []string
}

// Start serves the demo site and the canary until Close, and prints where.
func Start(cfg Config) (*Demo, error) {
	d := &Demo{cfg: cfg, secrets: map[string]string{}}
	canary, canaryURL, stopCanary, err := demosite.ListenCanary("127.0.0.2:0")
	if err != nil {
		return nil, fmt.Errorf("canary on 127.0.0.2: %w", err)
	}
	d.canary, d.canaryURL = canary, canaryURL
	d.stop = append(d.stop, stopCanary)
	site := demosite.New(demosite.Options{ForbiddenURL: canaryURL + "/"})
	// The site accepts only the manifest's secret password: signing in
	// shows that browsergate filled the placeholder in. The replay is told
	// where the secrets are, as an auditor would tell it.
	if m, err := toolclad.Load(cfg.Manifest); err == nil {
		for _, sec := range m.Secrets {
			site.Password.Store(sec.Value())
			where := "env:" + sec.Env
			if sec.File != "" {
				where = "file:" + filepath.Join(filepath.Dir(cfg.Manifest), sec.File)
			}
			d.secretArgs = append(d.secretArgs, "--secret", sec.Name+"="+where)
			if sec.File != "" {
				abs, _ := filepath.Abs(strings.TrimPrefix(where, "file:"))
				where = "file:" + abs
			}
			d.secrets[sec.Name] = where
		}
	}
	siteURL, stopSite, err := ServeOn("127.0.0.1:0", demosite.NewAttackSite(site, &demosite.Attacks{Canary: canaryURL}))
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("demo site: %w", err)
	}
	d.siteURL = siteURL
	d.stop = append(d.stop, stopSite)
	fmt.Fprintf(cfg.Out, "demo site  %s (in scope)\ncanary     %s (out of scope: must see 0 requests)\n\n", siteURL, canaryURL)
	return d, nil
}

// Close stops the site and the canary.
func (d *Demo) Close() {
	for i := len(d.stop) - 1; i >= 0; i-- {
		d.stop[i]()
	}
	d.stop = nil
}

// ReplaySecrets says where this machine has the manifest's secrets, for a
// replay of the session (replay.Options.Secrets).
func (d *Demo) ReplaySecrets() map[string]string { return d.secrets }

// SecretArgs are the --secret flags of the equivalent replay command, as
// its arguments.
func (d *Demo) SecretArgs() []string { return d.secretArgs }

// ServeArgs are the arguments Run starts browsergate with: serve, over
// stdio, with the demo's manifest, policies and evidence file.
func (d *Demo) ServeArgs() []string {
	return []string{"serve", "--manifest", d.cfg.Manifest, "--policies", d.cfg.Policies,
		"--evidence", d.cfg.Evidence, "--log-level", "warn"}
}

// CanaryErr is nil when the canary saw no request and no connection.
func (d *Demo) CanaryErr() error {
	if !d.canary.Clean() {
		return fmt.Errorf("the canary was reached: %s", d.canary)
	}
	return nil
}

// Run starts `browsergate serve` as a child process, plays the agent's
// and the operator's parts, stops serve, and prints what the canary saw.
func (d *Demo) Run(ctx context.Context) error {
	cfg := d.cfg
	cmd := exec.Command(cfg.Binary, d.ServeArgs()...)
	cmd.Stderr = cfg.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "browsergate-demo", Version: cfg.Version}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("start browsergate serve: %w", err)
	}
	agent := &scriptedAgent{cs: cs, out: cfg.Out, socket: operator.DefaultSocket(cfg.Evidence)}
	if err := agent.run(ctx, d.siteURL, d.canaryURL); err != nil {
		cs.Close()
		return err
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("stop browsergate serve: %w", err)
	}
	fmt.Fprintf(cfg.Out, "\ncanary: %s\n", d.canary)
	return nil
}

// ServeOn serves h on addr and returns its base URL and a func that stops
// it. The end-to-end tests serve their pages with it too.
func ServeOn(addr string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// errNotHeld means the operator waited in vain for a held call.
var errNotHeld = errors.New("no call was held for approval within 30s")

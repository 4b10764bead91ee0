package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/executor/approval"
	"github.com/browsergate/browsergate/toolclad"
)

// demo runs the quick start's governed browsing session: it serves the demo
// site on 127.0.0.1 and a canary on 127.0.0.2 (outside the scope), starts
// "browsergate serve" as a child process, drives it as an agent would
// through the official MCP client, then prints the evidence timeline and
// verifies the log.
func demo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	evidencePath := fs.String("evidence", "demo-evidence.db", "bbolt evidence file")
	manifest := fs.String("manifest", "examples/demo.toml", "demo manifest")
	policies := fs.String("policies", "policies", "Cedar policy directory")
	if err := parse(fs, args); err != nil {
		return err
	}
	canary, canaryURL, stopCanary, err := demosite.ListenCanary("127.0.0.2:0")
	if err != nil {
		return fmt.Errorf("canary on 127.0.0.2: %w", err)
	}
	defer stopCanary()
	site := demosite.New(demosite.Options{ForbiddenURL: canaryURL + "/"})
	// The site accepts only the manifest's secret password: signing in
	// shows that browsergate filled the placeholder in.
	// The replay at the end is told where the secrets are, as an auditor
	// would tell it.
	replay := replayOptions{secrets: map[string]string{}}
	var secretFlags []string
	if m, err := toolclad.Load(*manifest); err == nil {
		for _, sec := range m.Secrets {
			site.Password.Store(sec.Value())
			where := "env:" + sec.Env
			if sec.File != "" {
				where = "file:" + filepath.Join(filepath.Dir(*manifest), sec.File)
			}
			secretFlags = append(secretFlags, " --secret "+sec.Name+"="+where)
			if sec.File != "" {
				abs, _ := filepath.Abs(strings.TrimPrefix(where, "file:"))
				where = "file:" + abs
			}
			replay.secrets[sec.Name] = where
		}
	}
	siteURL, stopSite, err := serveOn("127.0.0.1:0", demosite.NewAttackSite(site, &demosite.Attacks{Canary: canaryURL}))
	if err != nil {
		return fmt.Errorf("demo site: %w", err)
	}
	defer stopSite()
	fmt.Fprintf(stdout, "demo site  %s (in scope)\ncanary     %s (out of scope: must see 0 requests)\n\n", siteURL, canaryURL)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(self, "serve", "--manifest", *manifest, "--policies", *policies,
		"--evidence", *evidencePath, "--log-level", "warn")
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "browsergate-demo", Version: version}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("start browsergate serve: %w", err)
	}
	agent := &scriptedAgent{cs: cs, out: stdout, socket: defaultApprovalsSocket(*evidencePath)}
	if err := agent.run(ctx, siteURL, canaryURL); err != nil {
		cs.Close()
		return err
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("stop browsergate serve: %w", err)
	}

	fmt.Fprintf(stdout, "\ncanary: %s\n", canary)
	sid, err := newestSession(*evidencePath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ browsergate evidence show --evidence %s --session %s\n", *evidencePath, sid)
	if err := evidenceShow(*evidencePath, sid, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ browsergate evidence verify --evidence %s\n", *evidencePath)
	if err := evidenceVerify(*evidencePath, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ browsergate evidence replay --evidence %s --session %s%s\n", *evidencePath, sid, strings.Join(secretFlags, ""))
	if err := evidenceReplay(*evidencePath, sid, replay, stdout); err != nil {
		return err
	}
	if !canary.Clean() {
		return fmt.Errorf("the canary was reached: %s", canary)
	}
	return nil
}

// serveOn serves h on addr and returns its base URL.
func serveOn(addr string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// scriptedAgent plays the agent's part in the demo: a fixed plan, each step
// printed with what browsergate answered.
type scriptedAgent struct {
	cs     *mcp.ClientSession
	out    io.Writer
	socket string // the daemon's approvals socket, for the demo's operator
}

func (a *scriptedAgent) run(ctx context.Context, siteURL, canaryURL string) error {
	tools, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(a.out, "tools: %s\n\n", strings.Join(names, ", "))

	steps := []struct {
		tool string
		args func(snap string) map[string]any
		want bool // expect allowed
		// operator, when set, is how the demo's human answers the approval
		// the call is held for: "approve" or "deny".
		operator string
	}{
		{"demo.navigate", fixed(map[string]any{"url": siteURL + "/login"}), true, ""},
		{"demo.snapshot", fixed(nil), true, ""},
		{"demo.type_text", byRef(`textbox "Username"`, map[string]any{"text": "alice"}), true, ""},
		{"demo.type_text", byRef(`textbox "Password"`, map[string]any{"text": "<DEMO_PASSWORD>"}), true, ""},
		{"demo.click", byRef(`button "Sign in"`, nil), true, ""},
		{"demo.snapshot", fixed(nil), true, ""},
		{"demo.navigate", fixed(map[string]any{"url": canaryURL + "/"}), false, ""},
		// Held for a human (policy submit-authenticated-needs-approval),
		// who approves it out of band.
		{"demo.submit_form", fixed(map[string]any{"selector": "form"}), true, "approve"},
		// Held (policies execute-js-needs-approval, critical-needs-approval);
		// the human refuses.
		{"demo.execute_js", fixed(map[string]any{"expression": "document.cookie"}), false, "deny"},
		// An in-scope page that tries to load an image from the canary:
		// the page is allowed, its request is not.
		{"demo.navigate", fixed(map[string]any{"url": siteURL + "/attack/img"}), true, ""},
	}
	snap := ""
	for _, st := range steps {
		args := st.args(snap)
		answered := make(chan error, 1)
		if st.operator != "" {
			go func() { answered <- a.operate(ctx, st.operator) }()
		}
		res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: st.tool, Arguments: args})
		if err != nil {
			return fmt.Errorf("%s: %w", st.tool, err)
		}
		if st.operator != "" {
			if err := <-answered; err != nil {
				return fmt.Errorf("%s: the operator could not answer: %w", st.tool, err)
			}
		}
		text := resultText(res)
		if strings.HasSuffix(st.tool, ".snapshot") && !res.IsError {
			snap = text
		}
		verdict := "allowed"
		if res.IsError {
			verdict = "REFUSED"
		}
		fmt.Fprintf(a.out, "> %s %s  [%s]\n%s\n\n", st.tool, compactJSON(args), verdict, indent(text))
		if res.IsError == st.want {
			return fmt.Errorf("%s: expected allowed=%v, got: %s", st.tool, st.want, text)
		}
	}
	return nil
}

// operate plays the human operator: it waits for the call to show up in
// the daemon's pending approvals (over the operator socket, as
// `browsergate approvals` does) and answers it.
func (a *scriptedAgent) operate(ctx context.Context, verb string) error {
	c, err := newApprovalsClient(a.socket)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var pending []approval.Request
		if err := c.do(http.MethodGet, "/v1/approvals", nil, &pending); err != nil {
			return err
		}
		if len(pending) > 0 {
			p := pending[0]
			approve := verb == "approve"
			fmt.Fprintf(a.out, "  [operator] held: %s — %s\n  [operator] $ browsergate approvals %s %s --by demo-operator\n\n", p.ID, p.Summary(), verb, p.ID)
			return c.do(http.MethodPost, "/v1/approvals/"+p.ID, decideBody{Approve: &approve, By: "demo-operator"}, &struct{}{})
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("no call was held for approval within 30s")
}

func fixed(args map[string]any) func(string) map[string]any {
	return func(string) map[string]any { return args }
}

// byRef finds the ref of the snapshot line that starts with prefix and adds
// it to args.
func byRef(prefix string, args map[string]any) func(string) map[string]any {
	return func(snap string) map[string]any {
		out := map[string]any{"ref": findRef(snap, prefix)}
		for k, v := range args {
			out[k] = v
		}
		return out
	}
}

var refRE = regexp.MustCompile(`\[ref=(e\d+)\]`)

// findRef returns the ref on the first snapshot line containing prefix.
func findRef(snap, prefix string) string {
	for _, line := range strings.Split(snap, "\n") {
		if strings.Contains(line, prefix) {
			if m := refRE.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func compactJSON(m map[string]any) string {
	if len(m) == 0 {
		return "{}"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%q", k, fmt.Sprint(v)))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// newestSession is the id of the session that started last in the log.
func newestSession(path string) (string, error) {
	store, err := openReadOnly(path)
	if err != nil {
		return "", err
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil || len(sessions) == 0 {
		return "", errors.Join(err, errors.New("the evidence log has no session"))
	}
	return sessions[len(sessions)-1].ID, nil
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

var callCommand = &command{
	name: "call",
	synopsis: `--url URL --token-file FILE [--list] [TOOL [JSON-ARGS]]...
		| [--list] [TOOL [JSON-ARGS]]... -- SERVE-FLAGS...`,
	summary: "Act as the agent by hand: make tool calls in one MCP session and print each reply, either against a\n" +
		"running `serve --http` (--url, with an agent's token) or against a `serve` it starts over stdio with the\n" +
		"flags after --. With no TOOL it reads one call a line, `TOOL {json}`, from stdin. A reply marked as an\n" +
		"error (a refusal) exits 1. It is an ordinary client: it can do nothing the agent's token and policies do not allow.",
	positional: 1 << 20,
	setup: func(fs *flag.FlagSet) action {
		var o callOptions
		fs.StringVar(&o.url, "url", "", "the `URL` of a running daemon's MCP endpoint, `http://HOST:PORT/mcp`")
		fs.StringVar(&o.tokenFile, "token-file", "", "the `FILE` holding the agent's token (with --url), sent as `Authorization: Bearer`")
		fs.BoolVar(&o.list, "list", false, "print the server's instructions and its tools with their descriptions and arguments")
		return func(args []string, stdout, stderr io.Writer) error {
			return runCall(o, args, stdout, stderr)
		}
	},
}

// callOptions are call's flags.
type callOptions struct {
	url       string
	tokenFile string
	list      bool
}

// toolCall is one call to make: the tool as the user named it and its
// arguments.
type toolCall struct {
	tool string
	args map[string]any
}

// splitCallArgs splits call's positional arguments into the calls and the
// flags of the serve to start. Everything after -- arrives here as a
// positional argument too, and the first argument that is a flag starts
// serve's: a tool name or a JSON object never begins with "-".
func splitCallArgs(args []string) (calls, serve []string) {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i], args[i:]
		}
	}
	return args, nil
}

// parseCalls reads TOOL [JSON-ARGS] pairs: a tool name, then its
// arguments as one JSON object when the next argument starts with "{".
// A bad object is named by its position and where in it the mistake is.
func parseCalls(args []string) ([]toolCall, error) {
	var calls []toolCall
	for i := 0; i < len(args); i++ {
		name := args[i]
		if looksLikeJSON(name) {
			return nil, fmt.Errorf("%w: call: argument %d is JSON with no tool before it: %s", errUsage, i+1, shorten(name))
		}
		if !callToolNameRE.MatchString(name) {
			return nil, fmt.Errorf("%w: call: argument %d is neither a tool name nor a JSON object: %s", errUsage, i+1, shorten(name))
		}
		c := toolCall{tool: name, args: map[string]any{}}
		if i+1 < len(args) && looksLikeJSON(args[i+1]) {
			m, err := parseJSONArgs(args[i+1])
			if err != nil {
				return nil, fmt.Errorf("%w: call: argument %d (the arguments of %s): %v", errUsage, i+2, name, err)
			}
			c.args = m
			i++
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// callToolNameRE is what a tool name may hold: MCP's letters, digits, "_",
// "-" and ".".
var callToolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// looksLikeJSON says whether an argument is meant as JSON rather than a
// tool name: an object, or a list or string given by mistake, which then
// gets the object's error rather than "unknown tool".
func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") || strings.HasPrefix(s, `"`)
}

// parseCallLine reads one line of the interactive mode: `TOOL {json}`,
// the JSON optional. ok is false for a blank line or a # comment.
func parseCallLine(line string) (c toolCall, ok bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return toolCall{}, false, nil
	}
	name, rest, _ := strings.Cut(line, " ")
	if looksLikeJSON(name) {
		return toolCall{}, false, errors.New("JSON with no tool before it: write `TOOL {json}`")
	}
	if !callToolNameRE.MatchString(name) {
		return toolCall{}, false, fmt.Errorf("%s is not a tool name: write `TOOL {json}`", shorten(name))
	}
	c = toolCall{tool: name, args: map[string]any{}}
	if rest = strings.TrimSpace(rest); rest != "" {
		if c.args, err = parseJSONArgs(rest); err != nil {
			return toolCall{}, false, fmt.Errorf("the arguments of %s: %v", name, err)
		}
	}
	return c, true, nil
}

// parseJSONArgs parses a call's arguments, which must be one JSON object.
// A syntax error says at which character it is, with the text up to it.
func parseJSONArgs(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("invalid JSON at character %d (after %s): %v", syn.Offset, shorten(s[:min(int(syn.Offset), len(s))]), syn)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("invalid JSON: it ends before the object is closed: %s", shorten(s))
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object {…}, not %s", shorten(s))
	}
	if dec.More() || dec.InputOffset() < int64(len(strings.TrimSpace(s))) {
		return nil, fmt.Errorf("invalid JSON: text after the object at character %d: %s", dec.InputOffset()+1, shorten(s[dec.InputOffset():]))
	}
	return m, nil
}

// shorten quotes s for a message, cut to a readable length.
func shorten(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		s = "…" + string(r[len(r)-max:])
	}
	return fmt.Sprintf("%q", s)
}

// resolveTool finds the tool a name means: the tool of that name, else the
// one tool whose name is a manifest's prefix and a separator before it
// ("snapshot" for "mysite.snapshot" or "mysite_snapshot"). Anything else is
// an error naming the nearest tool and listing them all.
func resolveTool(name string, tools []string) (string, error) {
	if slices.Contains(tools, name) {
		return name, nil
	}
	var matches []string
	for _, t := range tools {
		if strings.HasSuffix(t, "."+name) || strings.HasSuffix(t, "_"+name) {
			matches = append(matches, t)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		msg := fmt.Sprintf("unknown tool %q", name)
		if near := nearestTool(name, tools); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		return "", fmt.Errorf("%s; the tools are: %s", msg, strings.Join(tools, ", "))
	default:
		return "", fmt.Errorf("tool %q is ambiguous: it may be %s; give the whole name", name, orList(matches))
	}
}

// nearestTool is the tool whose name, or name without its prefix, is
// fewest edits from name; none when even that changes more than a third of
// the name (screenshot is not a misspelt snapshot).
func nearestTool(name string, tools []string) string {
	best, bestDist := "", len(name)/3+1
	for _, t := range tools {
		d := toolclad.EditDistance(name, t)
		if i := strings.LastIndexAny(t, "._"); i >= 0 {
			d = min(d, toolclad.EditDistance(name, t[i+1:]))
		}
		if d < bestDist {
			best, bestDist = t, d
		}
	}
	return best
}

// hasHTTPWithoutStdio says whether serve's flags make it listen on HTTP
// only, where call, which speaks to it on stdio, would wait for nothing.
func hasHTTPWithoutStdio(serve []string) bool {
	has := func(name string) bool {
		return slices.ContainsFunc(serve, func(a string) bool {
			a = strings.TrimLeft(a, "-")
			return a == name || strings.HasPrefix(a, name+"=")
		})
	}
	return has("http") && !has("stdio")
}

func runCall(o callOptions, positional []string, stdout, stderr io.Writer) error {
	args, serve := splitCallArgs(positional)
	switch {
	case o.url != "" && serve != nil:
		return fmt.Errorf("%w: call: give --url (a running daemon) or serve's flags after -- (a serve it starts), not both", errUsage)
	case o.url == "" && serve == nil:
		return fmt.Errorf("%w: call needs --url and --token-file (a running daemon) or serve's flags after -- (a serve it starts over stdio)", errUsage)
	case o.url != "" && o.tokenFile == "":
		return fmt.Errorf("%w: call: --url needs --token-file, the file holding the agent's token", errUsage)
	case o.url == "" && o.tokenFile != "":
		return fmt.Errorf("%w: call: --token-file goes with --url; a serve started over stdio takes no token", errUsage)
	case hasHTTPWithoutStdio(serve):
		return fmt.Errorf("%w: call: the serve it starts must speak on stdio: drop --http (or add --stdio)", errUsage)
	}
	if o.url != "" {
		// The token is the agent's whole identity: never in the clear
		// beyond this machine.
		if err := clearTextAllowed(o.url); err != nil {
			return err
		}
	}
	calls, err := parseCalls(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cs, err := callConnect(ctx, o, serve, stderr)
	if err != nil {
		return err
	}
	defer cs.Close()
	tools, err := listTools(ctx, cs)
	if err != nil {
		return fmt.Errorf("list the tools: %v", err)
	}
	if o.list {
		printTools(stdout, cs.InitializeResult(), tools)
		if len(calls) == 0 {
			return nil
		}
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	bs, err := openBrowserSession(ctx, cs, names)
	if err != nil {
		return err
	}
	defer bs.close(stderr)
	if len(calls) == 0 {
		return callLines(ctx, bs, names, os.Stdin, stdout, stderr)
	}
	// Every name is checked before the first call: a typo in the third
	// call should not leave the first two done.
	for i := range calls {
		if calls[i].tool, err = resolveTool(calls[i].tool, names); err != nil {
			return fmt.Errorf("%w: call: %v", errUsage, err)
		}
	}
	for i, c := range calls {
		if len(calls) > 1 {
			printCallHeader(stdout, i > 0, c)
		}
		isError, err := callOnce(ctx, bs, c, stdout)
		if err != nil {
			return err
		}
		// The calls after a refused one were planned on its success:
		// they stop here, as a script would.
		if isError {
			return fmt.Errorf("%s: the reply is an error (isError)", c.tool)
		}
	}
	return nil
}

// callConnect opens the one MCP session of the whole run: over HTTP with
// the agent's token, or over stdio with a serve started from this binary.
func callConnect(ctx context.Context, o callOptions, serve []string, stderr io.Writer) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "browsergate-call", Version: version}, nil)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if o.url != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("the token file: %v", err)
		}
		token := strings.TrimSpace(string(b))
		if token == "" {
			return nil, fmt.Errorf("the token file %s is empty", o.tokenFile)
		}
		bt := &bearerToken{token: token}
		cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{
			Endpoint: o.url, HTTPClient: &http.Client{Transport: bt}, MaxRetries: -1,
		}, nil)
		switch {
		case err != nil && bt.refused.Load():
			return nil, fmt.Errorf("connect to %s: the daemon refused the token in %s (401 Unauthorized): no agent of its agents file has it", o.url, o.tokenFile)
		case err != nil:
			return nil, fmt.Errorf("connect to %s: %v", o.url, err)
		}
		return cs, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find browsergate to start serve: %v", err)
	}
	cmd := exec.Command(self, append([]string{"serve"}, serve...)...)
	cmd.Stderr = stderr // serve's log
	cs, err := client.Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("start `browsergate serve %s`: %v (its log is above)", strings.Join(serve, " "), err)
	}
	return cs, nil
}

// bearerToken adds the agent's token to every request of the session,
// and notes a 401, which the SDK's error only calls "Unauthorized".
type bearerToken struct {
	token   string
	refused atomic.Bool
}

func (b *bearerToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		b.refused.Store(true)
	}
	return resp, err
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, nil
}

// printTools prints what --list shows: the server's instructions, then
// each tool, its arguments and its description.
func printTools(w io.Writer, init *mcp.InitializeResult, tools []*mcp.Tool) {
	if init != nil && init.Instructions != "" {
		fmt.Fprintf(w, "instructions: %s\n\n", init.Instructions)
	}
	for _, t := range tools {
		fmt.Fprintf(w, "%s %s\n    %s\n", t.Name, toolArgs(t.InputSchema), strings.ReplaceAll(strings.TrimSpace(t.Description), "\n", "\n    "))
	}
}

// toolArgs shows a tool's arguments as a JSON-like template, the required
// ones first: {"url": string}.
func toolArgs(schema any) string {
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return "{}"
	}
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if n, ok := r.(string); ok {
				required[n] = true
			}
		}
	}
	var names []string
	for n := range props {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, n := range names {
		typ := "any"
		if p, ok := props[n].(map[string]any); ok {
			if t, ok := p["type"].(string); ok {
				typ = t
			}
		}
		if !required[n] {
			typ += ", optional"
		}
		parts = append(parts, fmt.Sprintf("%q: %s", n, typ))
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

// browserSession is the run's session: its MCP session, and, with a daemon
// that serves clients of MCP's 2026-07-28 revision without one
// (--stateless-clients), the browser-session handle every call of the run
// carries.
type browserSession struct {
	cs     *mcp.ClientSession
	handle string
}

// openBrowserSession opens the run's browser session: a handle when the
// daemon gave no MCP session and offers the tool that opens one.
func openBrowserSession(ctx context.Context, cs *mcp.ClientSession, tools []string) (*browserSession, error) {
	bs := &browserSession{cs: cs}
	if cs.ID() != "" || !slices.Contains(tools, toolclad.OpenSessionTool) {
		return bs, nil
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolclad.OpenSessionTool})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", toolclad.OpenSessionTool, err)
	}
	h, _ := res.StructuredContent.(map[string]any)[toolclad.HandleArg].(string)
	if res.IsError || h == "" {
		return nil, fmt.Errorf("%s: no browser session: %s", toolclad.OpenSessionTool, toolclad.ResultText(res))
	}
	bs.handle = h
	return bs, nil
}

// close closes the run's browser-session handle, if it has one (an MCP
// session is closed with the client).
func (bs *browserSession) close(stderr io.Writer) {
	if bs.handle == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := bs.cs.CallTool(ctx, &mcp.CallToolParams{Name: toolclad.CloseSessionTool, Arguments: map[string]any{toolclad.HandleArg: bs.handle}})
	if err == nil && res.IsError {
		err = errors.New(toolclad.ResultText(res))
	}
	if err != nil {
		fmt.Fprintf(stderr, "browsergate: browser session %s not closed (the daemon ends it when idle): %v\n", bs.handle, err)
	}
}

// args are a call's arguments with the run's handle, when it has one.
func (bs *browserSession) args(c toolCall) map[string]any {
	if bs.handle == "" || c.tool == toolclad.OpenSessionTool || c.tool == toolclad.CloseSessionTool {
		return c.args
	}
	if _, given := c.args[toolclad.HandleArg]; given {
		return c.args
	}
	args := maps.Clone(c.args)
	if args == nil {
		args = map[string]any{}
	}
	args[toolclad.HandleArg] = bs.handle
	return args
}

// callOnce makes one call and prints its reply: the text, and a line for
// any part that is not text. It reports whether the reply is an error.
func callOnce(ctx context.Context, bs *browserSession, c toolCall, stdout io.Writer) (bool, error) {
	res, err := bs.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: bs.args(c)})
	if err != nil {
		return false, fmt.Errorf("%s: %v", c.tool, err)
	}
	for _, part := range res.Content {
		switch p := part.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(stdout, strings.TrimRight(p.Text, "\n"))
		case *mcp.ImageContent:
			fmt.Fprintf(stdout, "[image %s, %d bytes]\n", p.MIMEType, len(p.Data))
		default:
			fmt.Fprintf(stdout, "[%T]\n", part)
		}
	}
	return res.IsError, nil
}

// callLines is the interactive mode: one call a line from in, each reply
// printed after it. A mistake on a line is said and the next line read;
// the run fails at the end if any line was a mistake or a refusal.
func callLines(ctx context.Context, bs *browserSession, tools []string, in *os.File, stdout, stderr io.Writer) error {
	st, _ := in.Stat()
	terminal := st != nil && st.Mode()&os.ModeCharDevice != 0
	if terminal {
		fmt.Fprintf(stderr, "one call a line: TOOL {json}; ? lists the tools; Ctrl-D ends\n")
	}
	failed, calls := 0, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; ; n++ {
		if terminal {
			fmt.Fprint(stderr, "> ")
		}
		if !sc.Scan() {
			break
		}
		if strings.TrimSpace(sc.Text()) == "?" {
			fmt.Fprintln(stdout, strings.Join(tools, "\n"))
			continue
		}
		c, ok, err := parseCallLine(sc.Text())
		if err == nil && ok {
			c.tool, err = resolveTool(c.tool, tools)
		}
		if err != nil {
			fmt.Fprintf(stderr, "browsergate: line %d: %v\n", n, err)
			failed++
			continue
		}
		if !ok {
			continue
		}
		if !terminal {
			printCallHeader(stdout, calls > 0, c)
		}
		calls++
		isError, err := callOnce(ctx, bs, c, stdout)
		if err != nil {
			return err
		}
		if isError {
			failed++
		}
		if terminal { // the next prompt apart from the reply
			fmt.Fprintln(stdout)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the calls: %v", err)
	}
	if failed > 0 {
		return fmt.Errorf("%d of the calls were refused, failed or could not be read", failed)
	}
	return nil
}

// printCallHeader prints the line a reply follows in a transcript, the
// call as it was sent, after a blank line when a reply came before.
func printCallHeader(w io.Writer, after bool, c toolCall) {
	if after {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "> %s %s\n", c.tool, compactArgs(c.args))
}

// compactArgs is a call's arguments as one line of JSON, keys sorted.
func compactArgs(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return "{…}"
	}
	return string(b)
}

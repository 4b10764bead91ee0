package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestCallSplitsToolsFromServeFlags: the calls end where the first flag
// after -- begins, and with no flag there is no serve to start.
func TestCallSplitsToolsFromServeFlags(t *testing.T) {
	t.Parallel()
	calls, serve := splitCallArgs([]string{"navigate", `{"url":"http://x/"}`, "snapshot", "--manifest", "m.toml", "--policies", "p"})
	if !slices.Equal(calls, []string{"navigate", `{"url":"http://x/"}`, "snapshot"}) || !slices.Equal(serve, []string{"--manifest", "m.toml", "--policies", "p"}) {
		t.Errorf("calls %q, serve %q", calls, serve)
	}
	if calls, serve := splitCallArgs([]string{"snapshot"}); len(calls) != 1 || serve != nil {
		t.Errorf("no serve flags: calls %q, serve %q", calls, serve)
	}
}

// TestCallParsesToolsAndArguments: each tool takes the JSON object after
// it, or none; a mistake is a usage error naming the argument and where.
func TestCallParsesToolsAndArguments(t *testing.T) {
	t.Parallel()
	calls, err := parseCalls([]string{"navigate", ` {"url": "http://127.0.0.1/"}`, "snapshot", "click", `{"ref":"e3"}`})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].tool != "navigate" || calls[0].args["url"] != "http://127.0.0.1/" ||
		calls[1].tool != "snapshot" || len(calls[1].args) != 0 || calls[2].args["ref"] != "e3" {
		t.Errorf("calls: %+v", calls)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{`{"ref":"e1"}`}, `argument 1 is JSON with no tool before it`},
		{[]string{"click", `{"ref": e1}`}, `argument 2 (the arguments of click): invalid JSON at character 9 (after "{\"ref\": e")`},
		{[]string{"click", `{"ref":"e1"`}, `argument 2 (the arguments of click): invalid JSON: it ends before the object is closed`},
		{[]string{"click", `{"ref":"e1"} {}`}, `text after the object at character 14`},
		{[]string{"click", `["e1"]`}, `the arguments must be a JSON object`},
		{[]string{"snapshot", "click e1"}, `argument 2 is neither a tool name nor a JSON object: "click e1"`},
	} {
		_, err := parseCalls(c.args)
		if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

// TestCallParsesALine: a line is TOOL and an optional JSON object; blank
// lines and comments are skipped; mistakes say what is wrong.
func TestCallParsesALine(t *testing.T) {
	t.Parallel()
	c, ok, err := parseCallLine(`  click {"ref": "e3"}  `)
	if err != nil || !ok || c.tool != "click" || c.args["ref"] != "e3" {
		t.Errorf("click line: %+v %v %v", c, ok, err)
	}
	if c, ok, err := parseCallLine("snapshot"); err != nil || !ok || c.tool != "snapshot" || len(c.args) != 0 {
		t.Errorf("snapshot line: %+v %v %v", c, ok, err)
	}
	for _, line := range []string{"", "   ", "# a comment"} {
		if _, ok, err := parseCallLine(line); ok || err != nil {
			t.Errorf("%q: ok %v, err %v; want skipped", line, ok, err)
		}
	}
	for line, want := range map[string]string{
		`click {ref: "e3"}`: `the arguments of click: invalid JSON at character 2`,
		`{"ref": "e3"}`:     `JSON with no tool before it`,
		`click, {}`:         `"click," is not a tool name`,
	} {
		if _, _, err := parseCallLine(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}

// TestCallResolvesToolNames: the whole name, or the name without the
// manifest's prefix when one tool has it; an unknown name gets the nearest
// tool and the list, an ambiguous one the candidates.
func TestCallResolvesToolNames(t *testing.T) {
	t.Parallel()
	tools := []string{"mysite.click", "mysite.navigate", "mysite.snapshot", "docs_snapshot", "docs_navigate_back"}
	for name, want := range map[string]string{
		"mysite.click":  "mysite.click",
		"click":         "mysite.click",
		"navigate":      "mysite.navigate",
		"navigate_back": "docs_navigate_back",
		"back":          "docs_navigate_back",
	} {
		if got, err := resolveTool(name, tools); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %s", name, got, err, want)
		}
	}
	_, err := resolveTool("snapshot", tools)
	if err == nil || !strings.Contains(err.Error(), `tool "snapshot" is ambiguous: it may be mysite.snapshot or docs_snapshot`) {
		t.Errorf("ambiguous: %v", err)
	}
	_, err = resolveTool("navgate", tools)
	if err == nil || !strings.Contains(err.Error(), `unknown tool "navgate" (did you mean mysite.navigate?); the tools are: mysite.click, mysite.navigate, `) {
		t.Errorf("a typo: %v", err)
	}
	_, err = resolveTool("screenshot", tools)
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), `unknown tool "screenshot"; the tools are:`) {
		t.Errorf("a name near nothing: %v", err)
	}
}

// TestCallRefusesAServeThatWouldNotSpeakStdio: serve's flags with --http
// and without --stdio would leave call waiting on a silent pipe.
func TestCallRefusesAServeThatWouldNotSpeakStdio(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]bool{
		"--manifest m --http 127.0.0.1:0":        true,
		"--manifest m --http=127.0.0.1:0":        true,
		"--manifest m -http 127.0.0.1:0 --stdio": false,
		"--manifest m --policies p --evidence e": false,
		"--manifest m --http-host example.com":   false,
	} {
		if got := hasHTTPWithoutStdio(strings.Fields(args)); got != want {
			t.Errorf("%s: %v, want %v", args, got, want)
		}
	}
}

// TestCallShowsAToolsArguments: --list shows the arguments from the input
// schema, the required first.
func TestCallShowsAToolsArguments(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"selector": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}, "ref": map[string]any{"type": "string"}},
		"required":   []any{"text"},
	}
	if got, want := toolArgs(schema), `{"text": string; "ref": string, optional; "selector": string, optional}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := toolArgs(map[string]any{"type": "object"}); got != "{}" {
		t.Errorf("no arguments: %s", got)
	}
}

// TestCallFlagMistakes: the two forms' flags are checked before anything
// is started, each mistake with its reason.
func TestCallFlagMistakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "snapshot"}, "call needs --url and --token-file (a running daemon) or serve's flags after --"},
		{[]string{"call", "--url", "http://127.0.0.1:1/mcp", "snapshot"}, "--url needs --token-file"},
		{[]string{"call", "--url", "http://127.0.0.1:1/mcp", "--token-file", "t", "snapshot", "--", "--manifest", "m"}, "not both"},
		{[]string{"call", "--token-file", "t", "snapshot", "--", "--manifest", "m"}, "--token-file goes with --url"},
		{[]string{"call", "snapshot", "--", "--manifest", "m", "--http", "127.0.0.1:0"}, "drop --http"},
	} {
		var stdout, stderr strings.Builder
		if code := run(c.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestCallKeepsTheTokenOffTheNetworkInTheClear: --url over plain http is
// refused beyond loopback, before the token file is even read.
func TestCallKeepsTheTokenOffTheNetworkInTheClear(t *testing.T) {
	t.Parallel()
	var stdout, stderr strings.Builder
	code := run([]string{"call", "--url", "http://10.0.0.5:8080/mcp", "--token-file", "no-such-file", "snapshot"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "the token would cross the network in the clear: use https") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	code = run([]string{"call", "--url", "ftp://127.0.0.1/mcp", "--token-file", "t", "snapshot"}, &stdout, &stderr)
	if code != 2 {
		t.Errorf("an ftp URL: exit %d, want 2", code)
	}
}

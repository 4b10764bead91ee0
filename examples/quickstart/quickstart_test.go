package quickstart

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFindRef(t *testing.T) {
	t.Parallel()
	snap := "# Sign in\nUsername [textbox e4] Password [textbox e5]\n[button \"Sign in\" e6]\nSee [the docs](e7 /docs)."
	for _, tc := range []struct{ text, want string }{
		{"Username", "e4"},
		{"Password", "e5"},
		{`button "Sign in"`, "e6"},
		{"Sign in", "e6"}, // the heading's line has no ref
		{"the docs", "e7"},
		{"Nowhere", ""},
	} {
		if got := FindRef(snap, tc.text); got != tc.want {
			t.Errorf("FindRef(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestResultText(t *testing.T) {
	t.Parallel()
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{Data: []byte{1}}, &mcp.TextContent{Text: "b"}}}
	if got := ResultText(res); got != "a\nb" {
		t.Fatalf("ResultText = %q", got)
	}
}

func TestPrinting(t *testing.T) {
	t.Parallel()
	if got := indent("a\nb\n"); got != "    a\n    b" {
		t.Errorf("indent = %q", got)
	}
	if got := compactJSON(nil); got != "{}" {
		t.Errorf("compactJSON(nil) = %q", got)
	}
	if got := compactJSON(map[string]any{"url": "http://x/"}); got != `{url="http://x/"}` {
		t.Errorf("compactJSON = %q", got)
	}
	if got := byRef(`button "Go"`, map[string]any{"text": "hi"})(`[button "Go" e9]`); got["ref"] != "e9" || got["text"] != "hi" {
		t.Errorf("byRef = %v", got)
	}
}

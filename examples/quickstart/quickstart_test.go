package quickstart

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFindRef(t *testing.T) {
	t.Parallel()
	snap := "- heading \"Sign in\" [level=1]\n- textbox \"Username\" [ref=e4]\n- textbox \"Password\" [ref=e5]\n- button \"Sign in\" [ref=e6]"
	for _, tc := range []struct{ text, want string }{
		{`textbox "Username"`, "e4"},
		{`button "Sign in"`, "e6"},
		{`heading "Sign in"`, ""}, // no ref on that line
		{`link "Nowhere"`, ""},
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
	if got := byRef(`button "Go"`, map[string]any{"text": "hi"})(`- button "Go" [ref=e9]`); got["ref"] != "e9" || got["text"] != "hi" {
		t.Errorf("byRef = %v", got)
	}
}
